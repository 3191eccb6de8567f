import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestApp, testApp } from '../harness.ts';
import { seedOrg, seedProject } from '../seed.ts';
import { pier, removeScratchHomes, scratchHome } from './cli-helpers.ts';

// CLI messages that name the real problem (issue 39), against a real server: which token was refused, and
// `pier deploy` checking the project before it packs anything.

let t: TestApp;
let url: string;
beforeAll(async () => {
  t = await testApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  removeScratchHomes();
  await t?.close();
});

it('says the token in PIER_TOKEN is the problem when the server refuses it', async () => {
  const r = await pier(['orgs'], { url, home: scratchHome(), env: { PIER_TOKEN: 'pk.notakey.notasecret' } });
  expect(r.code).toBe(1);
  expect(r.stderr).toBe(
    `error AUTH_REQUIRED: ${url} refused the token in PIER_TOKEN (revoked, expired, or not from this Pier): unset PIER_TOKEN to use your saved login, or set a valid personal token.\n`,
  );
});

it("checks the project before packing: an unknown or another organization's project fails at once", async () => {
  const { owner } = await seedOrg(t.deps);
  const other = await seedOrg(t.deps);
  const theirs = await seedProject(t.deps, other.org);
  // A folder that does not exist: packing it would fail differently, so the error proves nothing was packed.
  const missing = path.join(os.tmpdir(), 'pier-no-such-app-folder');
  fs.rmSync(missing, { recursive: true, force: true });
  for (const slug of ['no-such-project', theirs.slug]) {
    const r = await pier(['deploy', missing, '--project', slug], {
      url,
      home: scratchHome(),
      env: { PIER_TOKEN: owner.token },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error PROJECT_NOT_FOUND: /);
    expect(r.stderr).not.toContain('Packed');
  }
});
