import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestApp, testApp } from '../harness.ts';
import { seedMember, seedUser, seedV1Tenant } from '../seed.ts';
import { freePort } from './browser/browser-kit.ts';
import { json, pier, removeScratchHomes, scratchHome } from './cli-helpers.ts';

// `pier cdn upload | ls | usage` against a real server, as a plain member with a personal token: the file
// goes to the presigned URL (progress on stderr), is confirmed, listed and counted; others see nothing.

let t: TestApp;
let url: string;
let dir: string;
beforeAll(async () => {
  // The upload URL is built from PUBLIC_URL, so the server must really listen there.
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  t = await testApp({ env: { PUBLIC_URL: url } });
  await t.app.listen({ host: '127.0.0.1', port });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-cli-cdn-'));
});
afterAll(async () => {
  removeScratchHomes();
  fs.rmSync(dir, { recursive: true, force: true });
  await t?.close();
});

it('uploads with progress, lists and reports usage; strangers and the other environment see nothing', {
  timeout: 180_000,
}, async () => {
  const a = await seedV1Tenant(t.deps);
  const member = await seedMember(t.deps, a.org.id, 'member');
  const home = scratchHome();
  const run = (args: string[], token = member.token) => pier(args, { url, home, env: { PIER_TOKEN: token } });
  const org = a.org.slug;
  const file = path.join(dir, 'photo.png');
  fs.writeFileSync(
    file,
    await sharp({ create: { width: 64, height: 48, channels: 3, background: '#15a' } })
      .png()
      .toBuffer(),
  );

  const up = await run(['cdn', 'upload', file, '--org', org, '--folder', 'shots']);
  expect(up.code, up.stderr).toBe(0);
  expect(up.stderr).toMatch(/Uploaded 100%/);
  const cdnUrl = up.stdout.trim();
  expect(cdnUrl).toMatch(new RegExp(`^${url}/cdn/[0-9a-f-]+/photo\\.png$`));
  const delivered = await fetch(cdnUrl);
  expect(delivered.status).toBe(200);
  expect(Buffer.from(await delivered.arrayBuffer()).equals(fs.readFileSync(file))).toBe(true);
  // The same through a resumable (tus) upload, as files over 100 MB go.
  const tus = await run(['cdn', 'upload', file, '--org', org, '--folder', 'shots', '--resumable', '--json']);
  expect(tus.code, tus.stderr).toBe(0);
  const viaTus = json<{ assetId: string; cdnUrl: string; size: number; status: string }>(tus);
  expect(viaTus).toMatchObject({ status: 'ready', size: fs.statSync(file).size });
  expect(Buffer.from(await (await fetch(viaTus.cdnUrl)).arrayBuffer()).equals(fs.readFileSync(file))).toBe(
    true,
  );
  // Removed again, so the listing and usage below count the first upload alone.
  expect((await t.v1('DELETE', `/cdn/assets/${viaTus.assetId}`, a.live)).statusCode).toBe(200);

  const ls = json<{ items: { filename: string; folder: string; width: number; mimeType: string }[] }>(
    await run(['cdn', 'ls', '--org', org, '--json']),
  );
  expect(ls.items).toEqual([
    expect.objectContaining({ filename: 'photo.png', folder: 'shots', width: 64, mimeType: 'image/png' }),
  ]);
  const table = await run(['cdn', 'ls', '--org', org, '--type', 'image']);
  expect(table.stdout).toMatch(/photo\.png\s+shots\s+image/);
  const sandbox = await run(['cdn', 'ls', '--org', org, '--env', 'sandbox']);
  expect(sandbox.stdout).toMatch(/No assets in .* \(sandbox\)/);

  const usage = json<{ objectCount: number; byType: Record<string, { bytes: number }> }>(
    await run(['cdn', 'usage', '--org', org, '--json']),
  );
  expect(usage.objectCount).toBe(1);
  expect(usage.byType.image!.bytes).toBe(fs.statSync(file).size);
  expect((await run(['cdn', 'usage', '--org', org])).stdout).toMatch(/in 1 objects[\s\S]*image/);

  const stranger = await seedUser(t.deps);
  const refused = await run(['cdn', 'ls', '--org', org], stranger.token);
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toMatch(/not found/i);
  const bad = await run(['cdn', 'upload', path.join(dir, 'missing.png'), '--org', org]);
  expect(bad.code).not.toBe(0);
  expect(bad.stderr).toMatch(/is not a file/);
});
