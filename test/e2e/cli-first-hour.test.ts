import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestApp, testApp, uniq } from '../harness.ts';
import { seedOperator, seedOrg, seedProject } from '../seed.ts';
import { pier, removeScratchHomes, scratchHome } from './cli-helpers.ts';

// The first hour with the CLI (issue 39), against a real server without SMTP_URL: the README's one step that
// makes the first account an organization's owner; messages that name the real problem (which token was
// refused); `pier deploy` checking the project before it packs anything.

let t: TestApp;
let url: string;
beforeAll(async () => {
  t = await testApp({ env: { PUBLIC_URL: 'http://127.0.0.1:8787' } });
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

it("makes the first account an organization's owner in the README's one step", async () => {
  expect(t.deps.config.smtp).toBeUndefined();
  const origin = t.deps.config.publicUrl;
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/json', origin, ...headers },
      payload: JSON.stringify(body),
    });
  // Someone signs up in the dashboard of a fresh Pier.
  const email = `${uniq('first')}@example.com`;
  const signUp = await post('/api/dashboard/sign-up', { email, password: 'a long enough password' });
  expect(signUp.statusCode).toBe(200);
  const me = {
    cookie: String(signUp.headers['set-cookie']).split(';')[0]!,
    'x-csrf-token': signUp.json().csrfToken as string,
  };
  // The operator: `npx pier admin org create --slug acme --name "Acme" --owner you@example.com`.
  const slug = uniq('acme');
  const r = await pier(['admin', 'org', 'create', '--slug', slug, '--name', 'Acme', '--owner', email], {
    url,
    home: scratchHome(),
    env: { PIER_OPERATOR_KEY: (await seedOperator(t.deps)).token },
  });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toMatch(new RegExp(`^Created organization ${slug}\\.\\n`));
  // The account verifies through "Mail Pier sent you" and is the organization's owner.
  const mail = await post('/api/fn/listMySystemMailForCli', {}, me);
  const text = (mail.json().items as { text: string }[])[0]!.text;
  const token = /\/verify-email#token=([A-Za-z0-9_-]{43})/.exec(text)![1];
  expect((await post('/api/dashboard/verify-email', { token }, me)).statusCode).toBe(200);
  const orgs = await post('/api/fn/listMyOrgsForCli', {}, me);
  expect(orgs.json()).toEqual([expect.objectContaining({ slug, name: 'Acme', role: 'owner' })]);
});
