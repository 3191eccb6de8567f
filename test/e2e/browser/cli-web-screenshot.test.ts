import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { closeSharedBrowserPool } from '../../../src/core/browser/shared.ts';
import { listen, type Served } from '../../browser-site.ts';
import { type TestApp, testApp } from '../../harness.ts';
import { seedMember, seedV1Tenant } from '../../seed.ts';
import { pier, removeScratchHomes, scratchHome } from '../cli-helpers.ts';

// `pier web screenshot` against a real server with its job worker and Chromium, as a plain member with a
// personal token: the image saved with -o has the size and colours asked for, progress goes to stderr, a
// page that fails says why. The site is on 127.0.0.2 (OUTBOUND_ALLOW), the API on 127.0.0.1.

let t: TestApp;
let url: string;
let site: Served;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-cli-shot-'));

beforeAll(async () => {
  site = await listen((_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(`<!doctype html><html><head><style>
      body { margin: 0; background: #fff; }
      @media (prefers-color-scheme: dark) { body { background: #101010; } }
      #tall { height: 1500px; }
    </style></head><body><div id="tall">Tall page</div></body></html>`);
  }, '127.0.0.2');
  t = await testApp({
    background: true,
    env: { OUTBOUND_ALLOW: '127.0.0.2/32', BROWSER_MAX_PAGES: '2', BROWSER_PAGE_TIMEOUT_MS: '120000' },
  });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  removeScratchHomes();
  await t?.close();
  await closeSharedBrowserPool();
  await site?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('saves a screenshot with the options asked for, and says why one failed', {
  timeout: 240_000,
}, async () => {
  const tenant = await seedV1Tenant(t.deps);
  const member = await seedMember(t.deps, tenant.org.id, 'member');
  const home = scratchHome();
  const run = (args: string[]) =>
    pier(['web', 'screenshot', ...args, '--org', tenant.org.slug], {
      url,
      home,
      env: { PIER_TOKEN: member.token },
      timeoutMs: 180_000,
    });

  const dark = path.join(dir, 'dark.png');
  const shot = await run([`${site.url}/`, '-o', dark, '--dark', '--width', '500', '--height', '300']);
  expect(shot.code, shot.stderr).toBe(0);
  expect(shot.stderr).toMatch(/screenshot .* queued/);
  expect(shot.stderr).toContain(`saved ${dark}`);
  expect(shot.stdout).toMatch(/dark\.png {2}png {2}500×300, \d+ bytes\n$/);
  const img = sharp(fs.readFileSync(dark));
  expect(await img.metadata()).toMatchObject({ format: 'png', width: 500, height: 300 });
  const { dominant } = await img.stats();
  expect(dominant.r + dominant.g + dominant.b).toBeLessThan(100);

  const full = path.join(dir, 'full.jpg');
  const tall = await run([`${site.url}/`, '-o', full, '--full-page', '--width', '400', '--height', '300']);
  expect(tall.code, tall.stderr).toBe(0);
  const meta = await sharp(fs.readFileSync(full)).metadata();
  expect(meta).toMatchObject({ format: 'jpeg', width: 400 });
  expect(meta.height).toBeGreaterThanOrEqual(1500);

  const missing = await run([`${site.url}/`, '--selector', '#nothing-here']);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain('error SCREENSHOT_FAILED:');
  expect(missing.stderr).toContain('#nothing-here');

  const badName = await run([`${site.url}/`, '-o', path.join(dir, 'shot.gif')]);
  expect(badName.code).toBe(1);
  expect(badName.stderr).toContain('Cannot tell the format');
  expect(fs.existsSync(path.join(dir, 'shot.gif'))).toBe(false);
});
