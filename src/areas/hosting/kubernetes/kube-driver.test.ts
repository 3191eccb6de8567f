import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeKubeApi, type Outcome } from '../../../../test/fakes/kube-api.ts';
import { type KubeAppInput, KubeDriver } from './kube-driver.ts';
import { appObjects, ENV_VERSION, ownerSelector } from './objects.ts';

// The real driver code against a strict fake API server on 127.0.0.1 that plays the controller.

function kubeconfig(servers: Record<string, FakeKubeApi>, current: string): KubeConfig {
  const kc = new KubeConfig();
  const names = Object.keys(servers);
  kc.loadFromOptions({
    clusters: names.map((n) => ({ name: n, server: servers[n]!.url, skipTLSVerify: true })),
    users: names.map((n) => ({ name: n, token: servers[n]!.token })),
    contexts: names.map((n) => ({ name: n, cluster: n, user: n })),
    currentContext: current,
  });
  return kc;
}

const app = (over: Partial<KubeAppInput> = {}): KubeAppInput => ({
  projectId: 'prj_shop',
  slug: 'shop',
  deploymentId: 'dpl_1',
  appsDomain: 'apps.example.com',
  healthPath: '/healthz',
  start: 'node server.js',
  artifactUrl: 'https://blobs.example.com/a.tar.gz?sig=1',
  env: { DATABASE_URL: 'postgres://u:p@db:5432/d', GREETING: 'hello' },
  limits: { memoryMb: 512, cpuPercent: 50 },
  tls: { secretName: 'wildcard-apps' },
  database: { cidr: '10.20.0.5/32', port: 5432 },
  ingressNamespace: 'ingress-nginx',
  ...over,
});

let fake: FakeKubeApi;
let driver: KubeDriver;
const DEP = 'apps/v1/deployments/pier-apps/app-shop';
const template = () =>
  (
    fake.objects.get(DEP)!.spec as {
      template: { metadata: { labels: Record<string, string>; annotations: Record<string, string> } };
    }
  ).template.metadata;

beforeAll(async () => {
  fake = await new FakeKubeApi().start();
  driver = new KubeDriver(kubeconfig({ fake }, 'fake'), 'pier-apps', { rolloutTimeoutMs: 5000 });
});
afterAll(() => fake.close());

describe('the Kubernetes driver against a strict API server', () => {
  it('deploy: applies the five objects with server-side apply and reports live once rolled out', async () => {
    expect(await driver.deploy(app(), null)).toEqual({ ok: true });
    const owned = fake.labelled(ownerSelector('prj_shop'));
    expect(owned.map((o) => o.kind).sort()).toEqual([
      'Deployment',
      'Ingress',
      'NetworkPolicy',
      'Pod',
      'Secret',
      'Service',
    ]);
    // What the server stored is what Pier generated: nothing lost in the client's serialization.
    const generated = appObjects({ ...app(), namespace: 'pier-apps' });
    const np = fake.objects.get('networking.k8s.io/v1/networkpolicies/pier-apps/app-shop');
    expect(np?.spec).toEqual(generated.networkPolicy.spec);
    expect(fake.objects.get(DEP)?.spec).toEqual(generated.deployment.spec);
    expect((fake.objects.get(DEP)!.metadata.managedFields as { manager: string }[])[0]?.manager).toBe('pier');
    expect(fake.requests.filter((r) => r.startsWith('PATCH')).length).toBe(5);
  });

  it('secret change: a rolling restart of the same version, never without a ready pod', async () => {
    const before = template().annotations[ENV_VERSION];
    const n = fake.rollouts.length;
    expect(await driver.deploy(app({ env: { ...app().env, GREETING: 'bonjour' } }), app())).toEqual({
      ok: true,
    });
    expect(template().annotations[ENV_VERSION]).not.toBe(before);
    const roll = fake.rollouts.slice(n);
    expect(roll).toHaveLength(1);
    expect(roll[0]!.from).not.toBeNull();
    expect(roll[0]!.minReady).toBeGreaterThanOrEqual(1);
    const secret = fake.objects.get('v1/secrets/pier-apps/app-shop-env')?.data as Record<string, string>;
    expect(Buffer.from(secret.GREETING!, 'base64').toString()).toBe('bonjour');
  });

  const failures: [Outcome, RegExp][] = [
    ['CrashLoopBackOff', /keeps exiting during start-up \(CrashLoopBackOff, exit code 1\)/],
    ['ImagePullBackOff', /could not be pulled \(ImagePullBackOff\)/],
    ['OOMKilled', /ran out of memory \(limit 512 MB\).*OOMKilled/],
  ];
  it.each(failures)(
    'failed rollout (%s): the reason in words, the old version kept serving',
    async (outcome, words) => {
      const live = app({ env: { ...app().env, GREETING: 'bonjour' } });
      fake.outcomes.set(`dpl_bad_${outcome}`, outcome);
      const result = await driver.deploy(app({ deploymentId: `dpl_bad_${outcome}` }), live);
      expect(result.ok).toBe(false);
      expect(!result.ok && result.reason).toMatch(words);
      await new Promise((r) => setTimeout(r, 50));
      expect(template().labels['pier.dev/deployment']).toBe('dpl_1');
      const pods = fake.list('v1/pods', 'pier-apps');
      expect(pods.every((p) => p.metadata.labels?.['pier.dev/deployment'] === 'dpl_1')).toBe(true);
      expect(pods.some((p) => p.status?.phase === 'Running')).toBe(true);
    },
  );

  it("rollback: the previous version's objects come back", async () => {
    expect(await driver.deploy(app({ deploymentId: 'dpl_2', start: 'node v2.js' }), null)).toEqual({
      ok: true,
    });
    expect(template().labels['pier.dev/deployment']).toBe('dpl_2');
    expect(await driver.deploy(app(), null)).toEqual({ ok: true });
    expect(template().labels['pier.dev/deployment']).toBe('dpl_1');
    const spec = fake.objects.get(DEP)?.spec as {
      template: { spec: { containers: { command: string[] }[] } };
    };
    expect(spec.template.spec.containers[0]!.command).toEqual(['sh', '-c', 'node server.js']);
  });

  it("logs come from the log API of the project's pods", async () => {
    const lines = await driver.logs('prj_shop');
    expect(lines).toHaveLength(1);
    expect(lines[0]!.line).toMatch(/^listening on 8080/);
  });

  it('destroy deletes every labelled object of the project and nothing of another', async () => {
    expect(
      await driver.deploy(app({ projectId: 'prj_blog', slug: 'blog', deploymentId: 'dpl_b' }), null),
    ).toEqual({
      ok: true,
    });
    const gone = await driver.destroy('prj_shop');
    expect(gone.sort()).toEqual(
      [
        'Deployment/app-shop',
        'Ingress/app-shop',
        'NetworkPolicy/app-shop',
        'Secret/app-shop-env',
        'Service/app-shop',
      ].sort(),
    );
    expect(fake.labelled(ownerSelector('prj_shop'))).toEqual([]);
    expect(fake.labelled(ownerSelector('prj_blog')).length).toBe(6);
  });

  it('the fake is strict as an API server: wrong content type 415, unknown field 422, no token 401', async () => {
    const url = `${fake.url}/apis/apps/v1/namespaces/pier-apps/deployments/app-x?fieldManager=pier`;
    const dep = { ...appObjects({ ...app({ slug: 'x' }), namespace: 'pier-apps' }).deployment };
    const send = (type: string, body: unknown, token = fake.token) =>
      fetch(url, {
        method: 'PATCH',
        headers: { 'content-type': type, authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      });
    expect((await send('application/merge-patch+json', dep)).status).toBe(415);
    expect(
      (await send('application/apply-patch+yaml', { ...dep, spec: { ...dep.spec, replica: 2 } })).status,
    ).toBe(422);
    expect((await send('application/apply-patch+yaml', dep, 'wrong')).status).toBe(401);
    expect((await send('application/apply-patch+yaml', dep)).status).toBe(201);
  });

  it("two regions: each project's objects land in its region's context and namespace", async () => {
    const eu = await new FakeKubeApi().start();
    try {
      const kc = kubeconfig({ us: fake, eu }, 'us');
      kc.setCurrentContext('eu');
      const euDriver = new KubeDriver(kc, 'pier-eu', { rolloutTimeoutMs: 5000 });
      expect(
        await euDriver.deploy(app({ projectId: 'prj_eu', slug: 'eu-shop', deploymentId: 'dpl_eu' }), null),
      ).toEqual({
        ok: true,
      });
      expect(eu.labelled(ownerSelector('prj_eu')).every((o) => o.metadata.namespace === 'pier-eu')).toBe(
        true,
      );
      expect(eu.labelled(ownerSelector('prj_eu')).length).toBe(6);
      expect(fake.labelled(ownerSelector('prj_eu'))).toEqual([]);
    } finally {
      await eu.close();
    }
  });
});
