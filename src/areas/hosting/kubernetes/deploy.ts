import { KubeConfig } from '@kubernetes/client-node';
import { and, desc, eq, inArray, max, ne } from 'drizzle-orm';
import type { Deps } from '../../../deps.ts';
import { orgs, PLANS, type Project, projectSecretEnv, projects } from '../../orgs/index.ts';
import { markDeploymentLive } from '../deployment-live.ts';
import { appDatabases, appLogs, deployments } from '../runtime/tables.ts';
import { type KubeAppInput, KubeDriver } from './kube-driver.ts';

// The deploy pipeline of a project in a Kubernetes region: the `hosting.deploy` job on any worker applies the
// version's objects and watches the rollout; secrets changes and restarts re-apply the live version (a rolling
// restart); destroy deletes what Pier labelled. Projects in local regions never reach this file's drivers.

type Deployment = typeof deployments.$inferSelect;
// A presigned GET lives as long as S3 allows (7 days); every apply signs a fresh one for new pods.
const ARTIFACT_URL_TTL_SEC = 7 * 24 * 3600;

const drivers = new WeakMap<Deps, Map<string, KubeDriver>>();

/** The Kubernetes driver of the project's region, or null when the region runs apps locally. */
export function kubeDriverFor(deps: Deps, region: string): KubeDriver | null {
  const d = deps.config.runtime.drivers[region];
  if (d?.kind !== 'kubernetes') return null;
  const byRegion = drivers.get(deps) ?? new Map<string, KubeDriver>();
  drivers.set(deps, byRegion);
  let driver = byRegion.get(region);
  if (!driver) {
    const kc = new KubeConfig();
    const file = deps.config.runtime.kubernetes.kubeconfig;
    if (file) kc.loadFromFile(file);
    else kc.loadFromDefault();
    if (d.context && !kc.getContexts().some((c) => c.name === d.context))
      throw new Error(`no context '${d.context}' in ${file ?? 'the default kubeconfig'}`);
    if (d.context) kc.setCurrentContext(d.context);
    if (!kc.getCurrentCluster())
      throw new Error(`no cluster for the current context in ${file ?? 'the default kubeconfig'}`);
    driver = new KubeDriver(kc, d.namespace);
    byRegion.set(region, driver);
  }
  return driver;
}

/**
 * At start-up: every Kubernetes region's kubeconfig and context can be loaded, so a typo stops Pier with the
 * region named instead of failing its first deploy.
 */
export function checkKubernetesRegions(deps: Deps): void {
  for (const [region, d] of Object.entries(deps.config.runtime.drivers)) {
    if (d.kind !== 'kubernetes') continue;
    try {
      kubeDriverFor(deps, region);
    } catch (err) {
      throw new Error(`Region ${region} (Kubernetes): ${(err as Error).message}`);
    }
  }
}

/** DATABASE_URL as pods reach it: the project's role on the shared PostgreSQL server. */
async function clusterDatabaseUrl(deps: Deps, projectId: string): Promise<string> {
  const [row] = await deps.db.orm.select().from(appDatabases).where(eq(appDatabases.projectId, projectId));
  if (!row || !deps.config.databaseUrl)
    throw new Error('The project has no database; it was not provisioned.');
  const url = new URL(deps.config.databaseUrl);
  url.hostname = deps.config.runtime.kubernetes.databaseHost ?? url.hostname;
  url.username = row.roleName;
  url.password = deps.keyring.decrypt(row.passwordEnc);
  url.pathname = `/${row.dbName}`;
  url.search = '';
  return url.toString();
}

async function appInput(deps: Deps, p: Project, d: Deployment, restartedAt?: string): Promise<KubeAppInput> {
  const manifest = d.manifest;
  if (!manifest) throw new Error('The release has not been checked yet.');
  if (manifest.type === 'static')
    throw new Error('Static sites are not served by the Kubernetes driver yet.');
  if (manifest.commands?.build || manifest.commands?.install)
    throw new Error(
      'The Kubernetes driver runs releases that need no build: deploy one with its node_modules and build output.',
    );
  const [org] = await deps.db.orm.select({ plan: orgs.plan }).from(orgs).where(eq(orgs.id, p.orgId));
  const k = deps.config.runtime.kubernetes;
  const dbPort = Number(new URL(deps.config.databaseUrl ?? 'postgres://x:5432').port || 5432);
  return {
    projectId: p.id,
    slug: p.slug,
    deploymentId: d.id,
    appsDomain: deps.config.appsDomain,
    healthPath: manifest.healthPath,
    start: manifest.commands?.start ?? manifest.start ?? 'npm start',
    artifactUrl: await deps.blobs.presignGet(d.artifactKey, { expiresInSec: ARTIFACT_URL_TTL_SEC }),
    env: { ...(await projectSecretEnv(deps, p.id)), DATABASE_URL: await clusterDatabaseUrl(deps, p.id) },
    limits: PLANS[org?.plan ?? 'free'].app,
    tls: k.tls,
    database: k.databaseCidr ? { cidr: k.databaseCidr, port: dbPort } : null,
    ingressNamespace: k.ingressNamespace,
    ...(k.ingressClassName ? { ingressClassName: k.ingressClassName } : {}),
    ...(restartedAt ? { restartedAt } : {}),
  };
}

async function liveDeployment(deps: Deps, projectId: string, except?: string): Promise<Deployment | null> {
  const [d] = await deps.db.orm
    .select()
    .from(deployments)
    .where(
      and(
        eq(deployments.projectId, projectId),
        inArray(deployments.status, ['live', 'crashed']),
        ...(except ? [ne(deployments.id, except)] : []),
      ),
    )
    .orderBy(desc(deployments.liveAt))
    .limit(1);
  return d ?? null;
}

/**
 * The deploy job for a project in a Kubernetes region; false when the project's region runs apps locally
 * (the local pipeline then runs it). The previous live version keeps serving when the rollout fails.
 */
export async function runKubeDeployment(deps: Deps, deploymentId: string): Promise<boolean> {
  const [row] = await deps.db.orm
    .select({ d: deployments, p: projects })
    .from(deployments)
    .innerJoin(projects, eq(projects.id, deployments.projectId))
    .where(eq(deployments.id, deploymentId));
  if (!row) return false;
  const driver = kubeDriverFor(deps, row.p.region);
  if (!driver) return false;
  const { d, p } = row;
  if (!['building', 'starting'].includes(d.status)) return true;
  const fail = (message: string) =>
    deps.db.orm
      .update(deployments)
      .set({ status: 'failed', errorMessage: message, finishedAt: deps.clock.now() })
      .where(eq(deployments.id, d.id));
  if (p.destroyedAt) {
    await fail('The project was destroyed.');
    return true;
  }
  let result: Awaited<ReturnType<KubeDriver['deploy']>>;
  try {
    await deps.db.orm.update(deployments).set({ status: 'starting' }).where(eq(deployments.id, d.id));
    const live = await liveDeployment(deps, p.id, d.id);
    const previous = live ? await appInput(deps, p, live).catch(() => null) : null;
    // A version that was live before (`pier restart` of a crashed app) restarts its pods.
    const restartedAt = d.liveAt ? deps.clock.now().toISOString() : undefined;
    result = await driver.deploy(await appInput(deps, p, d, restartedAt), previous);
  } catch (err) {
    await fail(err instanceof Error ? err.message : String(err));
    return true;
  }
  if (!result.ok) {
    await fail(result.reason);
    return true;
  }
  await markDeploymentLive(deps, p.id, d.id);
  return true;
}

/**
 * A restart or a secrets change of a project in a Kubernetes region: the live version applied again with the
 * current environment (a rolling restart, no failed request). False when the region runs apps locally. The
 * rollout goes on in the background (`pier restart` answers at once, as with the local driver); a failure is
 * logged, and the old pods keep serving.
 */
export async function restartKubeApp(deps: Deps, projectId: string): Promise<boolean> {
  const [p] = await deps.db.orm.select().from(projects).where(eq(projects.id, projectId));
  const driver = p ? kubeDriverFor(deps, p.region) : null;
  if (!p || !driver) return false;
  void (async () => {
    const live = await liveDeployment(deps, projectId);
    if (!live || live.status !== 'live') return;
    const result = await driver.deploy(await appInput(deps, p, live, deps.clock.now().toISOString()), null);
    if (!result.ok)
      deps.log.error({ project: p.slug, reason: result.reason }, 'the rolling restart did not complete');
  })().catch((err) => deps.log.error({ err, project: p.slug }, 'the rolling restart could not start'));
  return true;
}

/** Deletes every object Pier labelled as the project's in its region; false when the region runs locally. */
export async function destroyKubeApp(deps: Deps, p: Project): Promise<boolean> {
  const driver = kubeDriverFor(deps, p.region);
  if (!driver) return false;
  await driver.destroy(p.id);
  return true;
}

const KEEP_LOG_LINES = 5000;

/**
 * Copies the project's pod logs that are newer than its newest stored line into `app_logs`, so `pier logs` and
 * the dashboard read a Kubernetes app as they read a local one (ids for `--follow`, the same trimming). The log
 * API merges stdout and stderr: the lines are stored as stdout.
 */
export async function syncKubeLogs(deps: Deps, p: Project): Promise<void> {
  const driver = kubeDriverFor(deps, p.region);
  if (!driver) return;
  const [last] = await deps.db.orm
    .select({ ts: max(appLogs.ts) })
    .from(appLogs)
    .where(and(eq(appLogs.projectId, p.id), eq(appLogs.phase, 'runtime')));
  const lines = await driver.logs(p.id, 1000, last?.ts ? new Date(last.ts) : undefined);
  if (!lines.length) return;
  lines.sort((a, b) => a.ts.getTime() - b.ts.getTime());
  await deps.db.orm.insert(appLogs).values(
    lines.map((l) => ({
      projectId: p.id,
      deploymentId: l.deploymentId,
      ts: l.ts,
      stream: 'stdout' as const,
      phase: 'runtime' as const,
      line: l.line.length > 4000 ? `${l.line.slice(0, 4000)}…` : l.line,
    })),
  );
  await deps.db.query(
    `delete from app_logs where project_id = $1 and id < (
       select coalesce(min(id), 0) from (select id from app_logs where project_id = $1 order by id desc limit ${KEEP_LOG_LINES}) k)`,
    [p.id],
  );
}

/** One pass: every Kubernetes region's crash-looping live apps marked `crashed` with the reason. */
export async function checkKubeCrashes(deps: Deps): Promise<void> {
  for (const [region, d] of Object.entries(deps.config.runtime.drivers)) {
    if (d.kind !== 'kubernetes') continue;
    const driver = kubeDriverFor(deps, region);
    if (!driver) continue;
    for (const c of await driver.crashLooping()) {
      if (!c.deploymentId) continue;
      await deps.db.orm
        .update(deployments)
        .set({ status: 'crashed', errorMessage: c.reason, finishedAt: deps.clock.now() })
        .where(
          and(
            eq(deployments.id, c.deploymentId),
            eq(deployments.projectId, c.projectId),
            eq(deployments.status, 'live'),
          ),
        );
    }
  }
}

/** Checks the clusters for crash-looping apps every 30 s (only when a region runs on Kubernetes). */
export function watchKubeCrashes(deps: Deps): () => void {
  if (!Object.values(deps.config.runtime.drivers).some((d) => d.kind === 'kubernetes')) return () => {};
  const timer = setInterval(
    () =>
      void checkKubeCrashes(deps).catch((err) =>
        deps.log.warn({ err }, 'could not check the clusters for crashes'),
      ),
    30_000,
  );
  timer.unref();
  return () => clearInterval(timer);
}
