import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeKubeApi } from '../../../../test/fakes/kube-api.ts';
import { onPostgres, type TestApp, testApp } from '../../../../test/harness.ts';
import { deploy, nodeAppDir, packDir, settle } from '../../../../test/hosting.ts';
import { seedOrg } from '../../../../test/seed.ts';
import { createProject } from '../../orgs/index.ts';
import { checkKubeCrashes } from './deploy.ts';
import { ownerSelector } from './objects.ts';

// A project in a Kubernetes region through Pier's own pipeline: the function API deploys it, the
// `hosting.deploy` job on a worker without the router role applies it to that region's context and namespace
// (a strict fake API server on 127.0.0.1), secrets changes roll it, destroy removes what Pier labelled.
// The Kubernetes driver needs PostgreSQL (PGlite is refused at start-up), so the pipeline runs on PostgreSQL.

describe('with PGlite', () => {
  it.skipIf(onPostgres)('a Kubernetes region refuses to start, naming DATABASE_URL', async () => {
    await expect(
      testApp({ env: { REGIONS: 'local,fra', KUBERNETES_REGIONS: 'fra=fra/pier-fra' } }),
    ).rejects.toThrow(/DATABASE_URL: the Kubernetes driver \(region fra\) needs PostgreSQL; PGlite/);
  });
});

describe.skipIf(!onPostgres)('a project in a Kubernetes region, next to one in the local region', () => {
  let t: TestApp;
  let fra: FakeKubeApi;
  let token: string;
  let orgFull: Awaited<ReturnType<typeof seedOrg>>['org'];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-kube-'));
  const NS = 'apps/v1/deployments/pier-fra/';

  beforeAll(async () => {
    fra = await new FakeKubeApi().start();
    const kubeconfig = path.join(dir, 'config.json');
    fs.writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        // The fake speaks plain HTTP on loopback; the client takes that only with TLS checks off.
        clusters: [{ name: 'fra', cluster: { server: fra.url, 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'pier', user: { token: fra.token } }],
        contexts: [{ name: 'fra-ctx', context: { cluster: 'fra', user: 'pier' } }],
        'current-context': 'none',
      }),
    );
    t = await testApp({
      background: true,
      env: {
        REGIONS: 'local,fra',
        KUBERNETES_REGIONS: 'fra=fra-ctx/pier-fra',
        KUBECONFIG: kubeconfig,
        KUBERNETES_TLS: 'issuer:letsencrypt',
        APPS_DOMAIN: 'apps.example.com',
      },
    });
    const seeded = await seedOrg(t.deps, { plan: 'pro' });
    orgFull = seeded.org;
    token = seeded.owner.token;
  });
  afterAll(async () => {
    await t?.close();
    await fra?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const template = (slug: string) =>
    (
      fra.objects.get(`${NS}app-${slug}`)!.spec as {
        template: { metadata: { labels: Record<string, string> } };
      }
    ).template.metadata.labels;

  it('deploys, rolls on a secret change, keeps the old version on a failed rollout, rolls back, destroys', async () => {
    const p = await createProject(t.deps, orgFull, { slug: 'kshop', name: 'K shop', region: 'fra' });
    const local = await createProject(t.deps, orgFull, { slug: 'lshop', name: 'L shop', region: 'local' });
    expect(local.region).toBe('local');

    const first = await deploy(t, token, p.slug, await packDir(nodeAppDir('1')));
    expect(first.started.statusCode).toBe(200);
    expect(await settle(t, token, first.id)).toMatchObject({ status: 'live' });
    // In the region's namespace, under its context; the Secret carries the project's own database role.
    const owned = fra.labelled(ownerSelector(p.id));
    expect(owned.map((o) => o.kind).sort()).toEqual([
      'Deployment',
      'Ingress',
      'NetworkPolicy',
      'Pod',
      'Secret',
      'Service',
    ]);
    expect(owned.every((o) => o.metadata.namespace === 'pier-fra')).toBe(true);
    const env = fra.objects.get('v1/secrets/pier-fra/app-kshop-env')!.data as Record<string, string>;
    expect(Buffer.from(env.DATABASE_URL!, 'base64').toString()).toMatch(
      /^postgres:\/\/pier_app_[^:]+:[^@]+@[^/]+\/pier_app_/,
    );
    expect(template('kshop')['pier.dev/deployment']).toBe(first.id);
    // `pier logs` reads the pods through the log API, once (a second read adds no copy).
    const logs = async () =>
      (await t.call('getAppLogsForCli', { projectSlug: p.slug }, token)).json().lines as { line: string }[];
    expect((await logs()).map((l) => l.line)).toEqual([expect.stringMatching(/^listening on 8080/)]);
    expect(await logs()).toHaveLength(1);

    const rolls = fra.rollouts.length;
    await t.call('setSecretForCli', { projectSlug: p.slug, key: 'GREETING', value: 'bonjour' }, token);
    await waitUntil(() => fra.rollouts.length > rolls);
    const secret = () => fra.objects.get('v1/secrets/pier-fra/app-kshop-env')!.data as Record<string, string>;
    await waitUntil(() => secret().GREETING !== undefined);
    expect(Buffer.from(secret().GREETING!, 'base64').toString()).toBe('bonjour');
    expect(fra.rollouts.at(-1)!.minReady).toBeGreaterThanOrEqual(1);

    fra.defaultOutcome = 'CrashLoopBackOff';
    const bad = await deploy(t, token, p.slug, await packDir(nodeAppDir('2')));
    const failed = await settle(t, token, bad.id);
    fra.defaultOutcome = 'ready';
    expect(failed.status).toBe('failed');
    expect(failed.errorMessage).toMatch(/keeps exiting during start-up \(CrashLoopBackOff/);
    await waitUntil(() => template('kshop')['pier.dev/deployment'] === first.id);

    const second = await deploy(t, token, p.slug, await packDir(nodeAppDir('3')));
    expect((await settle(t, token, second.id)).status).toBe('live');
    const back = await t.call('rollbackDeploymentForCli', { projectSlug: p.slug }, token);
    expect(back.statusCode).toBe(200);
    expect((await settle(t, token, back.json().id)).status).toBe('live');
    expect(template('kshop')['pier.dev/deployment']).toBe(back.json().id);

    // Crash-looping after going live: marked crashed with the reason; `pier restart` rolls it back to live.
    fra.crash('pier-fra', 'app-kshop', 3);
    await checkKubeCrashes(t.deps);
    const crashed = (await t.call('getDeploymentForCli', { deploymentId: back.json().id }, token)).json();
    expect(crashed).toMatchObject({ status: 'crashed' });
    expect(crashed.errorMessage).toMatch(
      /kept exiting after it went live \(exit code 3; 5 restarts, CrashLoopBackOff\)/,
    );
    const restarted = await t.call('restartAppForCli', { projectSlug: p.slug }, token);
    expect(restarted.json()).toMatchObject({ status: 'starting' });
    expect((await settle(t, token, back.json().id)).status).toBe('live');

    expect((await t.call('destroyProjectForCli', { slug: p.slug }, token)).statusCode).toBe(200);
    expect(fra.labelled(ownerSelector(p.id))).toEqual([]);
    // The local region's project never reached the cluster.
    expect(fra.labelled(ownerSelector(local.id))).toEqual([]);
  }, 60_000);
});

async function waitUntil(ok: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
