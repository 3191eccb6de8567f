import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type TestApp, uniq } from '../harness.ts';
import {
  deploy,
  fixtures,
  hostingAppForFile,
  packDir,
  settle,
  upload,
  viaRouter,
  waitFor,
} from '../hosting.ts';
import { seedOrg, seedPlatform, seedProject } from '../seed.ts';
import { makeTarGz } from '../tarball.ts';
import { pier, removeScratchHomes, scratchHome } from './cli-helpers.ts';

// Whole-system hosting of what is not a running Node app: static sites, the artifacts refused, the deploy
// scope of platform credentials, destroy, and `pier deploy` end to end. Node apps are hosting.test.ts.

let t: TestApp;
hostingAppForFile('hosting-static', (app) => {
  t = app;
});
afterAll(() => removeScratchHomes());

describe('static sites, quota, bad artifacts, scopes, destroy', () => {
  it('serves a static site with content types, caching and SPA fallback', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const p = await seedProject(t.deps, org);
    const { id } = await deploy(t, owner.token, p.slug, await packDir(path.join(fixtures, 'static-site')));
    expect((await settle(t, owner.token, id)).status).toBe('live');
    const home = await viaRouter(t, p.slug, '/');
    expect(home.status).toBe(200);
    expect(home.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(home.headers['cache-control']).toMatch(/must-revalidate/);
    expect(home.body).toContain('Hello from a static site');
    const css = await viaRouter(t, p.slug, '/assets/app.css');
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.headers['cache-control']).toBe('public, max-age=3600');
    const again = await viaRouter(t, p.slug, '/assets/app.css', {
      headers: { 'if-none-match': String(css.headers.etag) },
    });
    expect(again.status).toBe(304);
    const deep = await viaRouter(t, p.slug, '/orders/42');
    expect(deep.status).toBe(200);
    expect(deep.body).toContain('Hello from a static site');
    expect((await viaRouter(t, p.slug, '/missing.js')).status).toBe(404);
    expect((await viaRouter(t, p.slug, '/secret.txt')).status).not.toBe(200); // .pierignore
    expect((await viaRouter(t, p.slug, '/../../../etc/passwd')).body).not.toContain('root:');

    // Free plan: one deployed app per organization.
    const second = await seedProject(t.deps, org);
    const quota = await t.call('createDeploymentForCli', { projectSlug: second.slug }, owner.token);
    expect(quota.statusCode).toBe(400);
    expect(quota.json().error.code).toBe('QUOTA_EXCEEDED');
    // Redeploying the same project is fine.
    const again2 = await t.call('createDeploymentForCli', { projectSlug: p.slug }, owner.token);
    expect(again2.statusCode).toBe(200);

    // Destroy: the app stops, the hostname is freed, the project leaves the lists.
    const destroyed = await t.call('destroyProjectForCli', { slug: p.slug }, owner.token);
    expect(destroyed.json()).toEqual({ ok: true, slug: p.slug });
    expect((await viaRouter(t, p.slug, '/')).status).toBe(404);
    const list = (await t.call('listMyProjectsForCli', {}, owner.token)).json();
    expect(list.map((x: { slug: string }) => x.slug)).not.toContain(p.slug);
    expect((await t.call('getProjectForCli', { slug: p.slug }, owner.token)).statusCode).toBe(404);
    // The quota slot is free again, and the slug can be taken anew.
    expect(
      (await t.call('createDeploymentForCli', { projectSlug: second.slug }, owner.token)).statusCode,
    ).toBe(200);
    const reuse = await t.call(
      'createProjectForCli',
      { orgSlug: org.slug, slug: p.slug, name: 'Again' },
      owner.token,
    );
    expect(reuse.json()).toMatchObject({ slug: p.slug, status: 'ready' });
  });

  it('refuses every bad artifact with a clear 4xx and leaves the live app alone', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const p = await seedProject(t.deps, org);
    const site = await deploy(t, owner.token, p.slug, await packDir(path.join(fixtures, 'static-site')));
    expect((await settle(t, owner.token, site.id)).status).toBe('live');
    const cases: [string, Buffer, number, string, RegExp][] = [
      ['not gzip', Buffer.from('just text'), 400, 'ARTIFACT_INVALID', /not a gzip/],
      [
        'escaping',
        makeTarGz([
          { path: 'index.html', body: 'x' },
          { path: '../x', body: 'x' },
        ]),
        400,
        'ARTIFACT_INVALID',
        /outside/,
      ],
      ['absolute', makeTarGz([{ path: '/tmp/x', body: 'x' }]), 400, 'ARTIFACT_INVALID', /outside/],
      [
        'link out',
        makeTarGz([
          { path: 'index.html', body: 'x' },
          { path: 'l', type: 'symlink', linkpath: '/etc/passwd' },
        ]),
        400,
        'ARTIFACT_INVALID',
        /outside/,
      ],
      [
        'no app',
        makeTarGz([{ path: 'README.md', body: 'x' }]),
        400,
        'ARTIFACT_INVALID',
        /No recognisable app/,
      ],
      ['too big', Buffer.alloc(100 * 1024 * 1024 + 1), 413, 'ARTIFACT_TOO_LARGE', /larger than 100 MB/],
    ];
    for (const [what, artifact, status, code, message] of cases) {
      const { started, id, uploaded } = await deploy(t, owner.token, p.slug, artifact);
      if (status === 413 && uploaded === 413) {
        // The disk store's presigned PUT enforces the size itself; the deployment never got an artifact.
        expect(started.json().error.code, what).toBe('ARTIFACT_MISSING');
        expect((await viaRouter(t, p.slug, '/')).body, what).toContain('Hello from a static site');
        continue;
      }
      expect(started.statusCode, what).toBe(status);
      expect(started.json().error.code, what).toBe(code);
      expect(started.json().error.message, what).toMatch(message);
      const d = (await t.call('getDeploymentForCli', { deploymentId: id }, owner.token)).json();
      expect(d.status, what).toBe('failed');
      expect((await viaRouter(t, p.slug, '/')).body, what).toContain('Hello from a static site');
    }
    // Starting before uploading, and starting twice.
    const created = (await t.call('createDeploymentForCli', { projectSlug: p.slug }, owner.token)).json();
    const early = await t.call('startDeploymentForCli', { deploymentId: created.deploymentId }, owner.token);
    expect(early.json().error.code).toBe('ARTIFACT_MISSING');
    const twice = await t.call('startDeploymentForCli', { deploymentId: site.id }, owner.token);
    expect(twice.statusCode).toBe(409);
  });

  it('deploys with a platform credential holding the deploy scope, and nothing more', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const p = await seedProject(t.deps, org);
    const deployer = await seedPlatform(t.deps, ['deploy']);
    const creator = await seedPlatform(t.deps, ['project.create']);
    const denied = await t.call('createDeployment', { projectId: p.id }, creator.token);
    expect(denied.json().error.code).toBe('PLATFORM_SCOPE_DENIED');
    const created = await t.call('createDeployment', { projectId: p.id }, deployer.token);
    expect(created.statusCode).toBe(200);
    expect(await upload(t, created.json(), await packDir(path.join(fixtures, 'static-site')))).toBe(200);
    const started = await t.call(
      'startDeployment',
      { deploymentId: created.json().deploymentId },
      deployer.token,
    );
    expect(started.json().status).toBe('building');
    await waitFor('live', async () => {
      const d = await t.call('getDeployment', { deploymentId: created.json().deploymentId }, deployer.token);
      return d.json().status === 'live';
    });
    for (const [fn, body] of [
      ['createProjectInOrg', { orgId: org.id, slug: uniq('x'), name: 'x' }],
      ['setSecretForCli', { projectSlug: p.slug, key: 'A', value: 'b' }],
      ['listSecretsForCli', { projectSlug: p.slug }],
    ] as const) {
      expect((await t.call(fn, body, deployer.token)).statusCode, fn).toBe(403);
    }
    const member = await t.call(
      'startDeploymentForCli',
      { deploymentId: created.json().deploymentId },
      owner.token,
    );
    expect(member.statusCode).toBe(409);
  });
});

describe('pier deploy', () => {
  it('packs, uploads, follows to live and prints the URL; deployments, logs and destroy', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const p = await seedProject(t.deps, org);
    const home = scratchHome();
    const o = { url: t.url, home, env: { PIER_TOKEN: owner.token } };
    const dep = await pier(['deploy', path.join(fixtures, 'static-site'), '--project', p.slug], o);
    expect(dep.stderr).toMatch(/Packed 4 files/);
    expect(dep.stderr).toMatch(/Uploaded 100%/);
    expect(dep.stderr).toMatch(/live/);
    expect(dep.stdout).toBe(`Live at http://${p.slug}.apps.test\n`);
    expect(dep.code).toBe(0);
    expect((await viaRouter(t, p.slug, '/')).body).toContain('Hello from a static site');
    const list = await pier(['deployments', '--project', p.slug], o);
    expect(list.stdout).toMatch(/live\s+static/);
    const none = await pier(['deploy', path.join(fixtures, 'static-site')], o);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/--project/);
    const gone = await pier(['destroy', p.slug, '--yes'], o);
    expect(gone.stdout).toBe(`Destroyed ${p.slug}.\n`);
    expect((await viaRouter(t, p.slug, '/')).status).toBe(404);
  });
});
