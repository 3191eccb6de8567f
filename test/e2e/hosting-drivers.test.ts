import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ownerSelector } from '../../src/areas/hosting/kubernetes/objects.ts';
import { createProject } from '../../src/areas/orgs/index.ts';
import { FakeKubeApi } from '../fakes/kube-api.ts';
import { onPostgres, type TestApp } from '../harness.ts';
import { deploy, hostingAppForFile, nodeAppDir, packDir, settle, viaRouter, waitFor } from '../hosting.ts';
import { seedOrg } from '../seed.ts';

// One scenario table, run against each runtime driver of one Pier: `local` (processes on this node, reached
// through the router) and `kubernetes` (a region on a strict fake API server that plays the controller).
// What differs is only how the test looks at the result: the router's answers, or the cluster's objects.
// The Kubernetes driver needs PostgreSQL (PGlite is refused at start-up), so on PGlite only `local` runs.

type Observed = { failures: string[]; restarted: boolean };
type Driver = {
  name: string;
  region: string;
  /** The version (version.json) the app's traffic reaches now. */
  serving(slug: string): Promise<string | null>;
  /** Watches the app while something changes; stop() says whether a request failed and the pods rolled. */
  watch(slug: string): { stop(): Promise<Observed> };
  /** How the broken version fails on this driver (the cluster's part is played by the fake). */
  breakNext(): void;
  failure: RegExp;
  /** What is left of a destroyed project: answering routes, cluster objects. */
  leftovers(slug: string, projectId: string): Promise<string[]>;
};

let t: TestApp;
const fra = onPostgres ? new FakeKubeApi() : null;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-drivers-'));
const kubeconfig = path.join(dir, 'kubeconfig.json');
const versionOf = new Map<string, string>();

if (fra) await fra.start();
fs.writeFileSync(
  kubeconfig,
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'fra',
        cluster: { server: fra?.url ?? 'http://127.0.0.1:9', 'insecure-skip-tls-verify': true },
      },
    ],
    users: [{ name: 'pier', user: { token: fra?.token ?? 'x' } }],
    contexts: [{ name: 'fra-ctx', context: { cluster: 'fra', user: 'pier' } }],
    'current-context': 'fra-ctx',
  }),
);
afterAll(async () => {
  await fra?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
hostingAppForFile(
  'drivers',
  (app) => {
    t = app;
  },
  {
    REGIONS: 'local,fra',
    ...(fra ? { KUBERNETES_REGIONS: 'fra=fra-ctx/pier-fra', KUBECONFIG: kubeconfig } : {}),
  },
);

async function routed(slug: string): Promise<{ version: string; instance: string } | null> {
  const r = await viaRouter(t, slug);
  return r.status === 200 ? JSON.parse(r.body) : null;
}

const local: Driver = {
  name: 'local',
  region: 'local',
  serving: async (slug) => (await routed(slug))?.version ?? null,
  watch(slug) {
    let running = true;
    const failures: string[] = [];
    const instances = new Set<string>();
    const done = (async () => {
      while (running) {
        const r = await viaRouter(t, slug).catch((e: Error) => ({ status: 0, body: e.message }));
        if (r.status === 200) instances.add(JSON.parse(r.body).instance);
        else failures.push(`${r.status} ${r.body.slice(0, 80)}`);
      }
    })();
    return {
      stop: async () => {
        await waitFor('the new process', async () => instances.size > 1, 15_000).catch(() => {});
        running = false;
        await done;
        return { failures, restarted: instances.size > 1 };
      },
    };
  },
  breakNext: () => {},
  failure: /exited during start-up \(code 1\)/,
  leftovers: async (slug) => ((await viaRouter(t, slug)).status === 404 ? [] : [`${slug} still answers`]),
};

const template = (slug: string) =>
  (
    fra!.objects.get(`apps/v1/deployments/pier-fra/app-${slug}`)?.spec as
      | { template: { metadata: { labels: Record<string, string> } } }
      | undefined
  )?.template.metadata.labels;

const kubernetes: Driver = {
  name: 'kubernetes',
  region: 'fra',
  serving: async (slug) => versionOf.get(template(slug)?.['pier.dev/deployment'] ?? '') ?? null,
  watch() {
    const from = fra!.rollouts.length;
    return {
      stop: async () => {
        await waitFor('a rollout', async () => fra!.rollouts.length > from, 15_000).catch(() => {});
        const rolls = fra!.rollouts.slice(from);
        // The Service always had a ready pod: the cluster's version of "no failed request".
        return {
          failures: rolls.filter((r) => r.minReady < 1).map((r) => `no ready pod during ${r.to}`),
          restarted: rolls.length > 0,
        };
      },
    };
  },
  breakNext: () => {
    fra!.defaultOutcome = 'CrashLoopBackOff';
  },
  failure: /keeps exiting during start-up \(CrashLoopBackOff, exit code 1\)/,
  leftovers: async (_slug, projectId) =>
    fra!.labelled(ownerSelector(projectId)).map((o) => `${o.kind}/${o.metadata.name}`),
};

describe.each(onPostgres ? [local, kubernetes] : [local])('the $name driver', (driver) => {
  let token: string;
  let slug: string;
  let projectId: string;
  const ship = async (version: string, extra: Record<string, string> = {}) => {
    const d = await deploy(t, token, slug, await packDir(nodeAppDir(version, extra)));
    versionOf.set(d.id, version);
    return { id: d.id, result: await settle(t, token, d.id, 110_000) };
  };

  it('deploy → live', async () => {
    const s = await seedOrg(t.deps);
    token = s.owner.token;
    const p = await createProject(t.deps, s.org, {
      slug: `drv-${driver.name}`,
      name: driver.name,
      region: driver.region,
    });
    slug = p.slug;
    projectId = p.id;
    expect((await ship('1')).result.status).toBe('live');
    await waitFor('version 1', async () => (await driver.serving(slug)) === '1');
  }, 120_000);

  it('a secret change rolls the app with no failed request', async () => {
    const watch = driver.watch(slug);
    await t.call('setSecretForCli', { projectSlug: slug, key: 'GREETING', value: 'two' }, token);
    const seen = await watch.stop();
    expect(seen).toEqual({ failures: [], restarted: true });
    expect(await driver.serving(slug)).toBe('1');
  }, 60_000);

  it('a failed rollout ends failed with the reason, the old version kept', async () => {
    driver.breakNext();
    const bad = await ship('2', { 'pier.json': JSON.stringify({ start: 'node -e "process.exit(1)"' }) });
    if (fra) fra.defaultOutcome = 'ready';
    expect(bad.result.status).toBe('failed');
    expect(bad.result.errorMessage).toMatch(driver.failure);
    await waitFor('version 1 again', async () => (await driver.serving(slug)) === '1');
  }, 120_000);

  it('rollback runs the version live before the current one', async () => {
    expect((await ship('3')).result.status).toBe('live');
    await waitFor('version 3', async () => (await driver.serving(slug)) === '3');
    const back = await t.call('rollbackDeploymentForCli', { projectSlug: slug }, token);
    expect(back.statusCode).toBe(200);
    versionOf.set(back.json().id, '1');
    expect((await settle(t, token, back.json().id, 110_000)).status).toBe('live');
    await waitFor('version 1 back', async () => (await driver.serving(slug)) === '1');
  }, 120_000);

  it('destroy leaves nothing of the app', async () => {
    expect((await t.call('destroyProjectForCli', { slug }, token)).statusCode).toBe(200);
    expect(await driver.leftovers(slug, projectId)).toEqual([]);
  }, 60_000);
});
