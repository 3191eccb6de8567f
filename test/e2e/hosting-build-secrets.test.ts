import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../harness.ts';
import { hostingAppForFile, viaRouter, waitFor } from '../hosting.ts';
import { seedMember, seedOrg, seedProject } from '../seed.ts';
import { pier, removeScratchHomes, scratchHome } from './cli-helpers.ts';

// The build flag on secrets (issue 34, decision 108): besides the VITE_/PUBLIC_/NEXT_PUBLIC_ names, a secret
// marked with `pier secrets set --build` reaches the build's environment; no other does, and the deploy output
// names (never shows) what the build saw.

let t: TestApp;
hostingAppForFile('build-secrets', (app) => {
  t = app;
});
afterAll(() => removeScratchHomes());

const made: string[] = [];
afterAll(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

/** A static site without dependencies whose build writes the settings it sees into its page. */
function buildEchoApp(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-build-echo-'));
  made.push(dir);
  const files: Record<string, string> = {
    'package.json': JSON.stringify({ name: 'echo', private: true, scripts: { build: 'node build.js' } }),
    'package-lock.json': JSON.stringify({
      name: 'echo',
      lockfileVersion: 3,
      requires: true,
      packages: { '': { name: 'echo' } },
    }),
    'build.js':
      "const fs = require('node:fs'); fs.mkdirSync('dist', { recursive: true });\n" +
      "const seen = ['MARKED_TOKEN', 'PLAIN_SECRET', 'VITE_TITLE'].map((k) => k + '=' + (process.env[k] ?? '-'));\n" +
      "fs.writeFileSync('dist/index.html', '<p>' + seen.join(' ') + '</p>\\n');\n",
  };
  for (const [f, body] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), body);
  return dir;
}

describe('secrets marked for the build', () => {
  it('reach the build with the prefixed ones, others never do; the deploy output names them', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const slug = (await seedProject(t.deps, org)).slug;
    const o = { url: t.url, home: scratchHome(), env: { PIER_TOKEN: owner.token } };
    const set = (args: string[]) => pier(['secrets', 'set', ...args, '--project', slug], o);

    const marked = await set(['MARKED_TOKEN', 'pk_build_123', '--build']);
    expect(marked.code, marked.stderr).toBe(0);
    expect(marked.stdout).toBe(
      `Set MARKED_TOKEN on ${slug}. It reaches the builds from the next deploy on.\n`,
    );
    expect((await set(['PLAIN_SECRET', 'sk_never_in_build'])).code).toBe(0);
    expect((await set(['VITE_TITLE', 'Hello'])).code).toBe(0);
    const list = await pier(['secrets', 'list', '--project', slug], o);
    expect(list.stdout).toMatch(/MARKED_TOKEN\s.*yes \(--build\)/);
    expect(list.stdout).toMatch(/PLAIN_SECRET\s.*no/);
    expect(list.stdout).toMatch(/VITE_TITLE\s.*yes \(prefix\)/);

    const run = await pier(['deploy', buildEchoApp(), '--project', slug], o);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('settings exposed to the build: MARKED_TOKEN, VITE_TITLE');
    expect(run.stderr + run.stdout).not.toContain('pk_build_123');
    expect(run.stderr + run.stdout).not.toContain('sk_never_in_build');
    const page = await viaRouter(t, slug, '/');
    expect(page.body).toBe('<p>MARKED_TOKEN=pk_build_123 PLAIN_SECRET=- VITE_TITLE=Hello</p>\n');

    // Setting the value again keeps the mark; --no-build takes it off for the next build.
    expect((await set(['MARKED_TOKEN', 'pk_build_456'])).code).toBe(0);
    const off = await set(['MARKED_TOKEN', 'pk_build_789', '--no-build']);
    expect(off.stdout).toBe(`Set MARKED_TOKEN on ${slug}. It stays out of the builds.\n`);
    const again = await pier(['deploy', buildEchoApp(), '--project', slug], o);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('settings exposed to the build: VITE_TITLE');
    await waitFor('the rebuilt page', async () =>
      (await viaRouter(t, slug, '/')).body.includes('MARKED_TOKEN=- PLAIN_SECRET=- VITE_TITLE=Hello'),
    );
  }, 300_000);

  it('answers 404 for a missing secret or another org’s project, 403 to a member, and forgets the mark with the secret', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const slug = (await seedProject(t.deps, org)).slug;
    const call = (body: object, token = owner.token) => t.call('setSecretBuildForCli', body, token);
    const missing = await call({ projectSlug: slug, key: 'NOT_SET', build: true });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('SECRET_NOT_FOUND');
    expect((await call({ projectSlug: slug, key: 'bad key', build: true })).json().error.code).toBe(
      'INVALID_KEY',
    );
    expect((await call({ projectSlug: slug, key: 'A', build: 'yes' })).statusCode).toBe(400);

    await t.call('setSecretForCli', { projectSlug: slug, key: 'API_KEY', value: 'v' }, owner.token);
    expect((await call({ projectSlug: slug, key: 'API_KEY', build: true })).json()).toEqual({
      ok: true,
      key: 'API_KEY',
      build: true,
      reachesBuild: true,
    });
    const other = await seedOrg(t.deps);
    const foreign = await call({ projectSlug: slug, key: 'API_KEY', build: false }, other.owner.token);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.code).toBe('PROJECT_NOT_FOUND');
    expect(
      (await t.call('listBuildSecretsForCli', { projectSlug: slug }, other.owner.token)).statusCode,
    ).toBe(404);
    const member = await seedMember(t.deps, org.id, 'member');
    expect((await call({ projectSlug: slug, key: 'API_KEY', build: false }, member.token)).statusCode).toBe(
      403,
    );
    const listed = await t.call('listBuildSecretsForCli', { projectSlug: slug }, member.token);
    expect(listed.json()).toEqual([{ key: 'API_KEY', marked: true, prefix: false }]);

    // Removing the secret removes its mark: set again, it stays out of the build until marked.
    await t.call('removeSecretForCli', { projectSlug: slug, key: 'API_KEY' }, owner.token);
    await t.call('setSecretForCli', { projectSlug: slug, key: 'API_KEY', value: 'v2' }, owner.token);
    expect((await t.call('listBuildSecretsForCli', { projectSlug: slug }, owner.token)).json()).toEqual([]);
  });
});
