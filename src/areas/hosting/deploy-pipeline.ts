import fs from 'node:fs';
import path from 'node:path';
import { and, eq, inArray, isNull, ne, sql } from 'drizzle-orm';
import { ApiError } from '../../core/errors.ts';
import type { Deps } from '../../deps.ts';
import type { Org, Project } from '../orgs/index.ts';
import { orgs, orgsErrors, PLANS, projects } from '../orgs/index.ts';
import { markDeploymentLive } from './deployment-live.ts';
import { hostingErrors } from './errors.ts';
import { pruneReleases, releaseDirOf } from './release-folders.ts';
import {
  checkArtifact,
  detectApp,
  extractArtifact,
  MAX_ARTIFACT_BYTES,
  saveArtifact,
} from './runtime/artifact.ts';
import type { Supervisor } from './runtime/supervisor.ts';
import { type AppManifest, deployments } from './runtime/tables.ts';

// The deploy pipeline. queueDeployment (API node) checks the artifact and the quota synchronously, so a bad
// artifact is a 4xx at once and touches nothing live; the `hosting.deploy` job (worker + runtime node) then
// starts the new version beside the old, health-checks it and switches.

export type Deployment = typeof deployments.$inferSelect;

/** Free plan: one deployed app per organization; deployments in flight count too. */
export async function assertDeployQuota(
  deps: Deps,
  org: Org,
  projectId: string,
  db = deps.db.orm,
): Promise<void> {
  const limit = PLANS[org.plan].liveApps;
  const rows = await db
    .selectDistinct({ projectId: deployments.projectId })
    .from(deployments)
    .innerJoin(projects, eq(projects.id, deployments.projectId))
    .where(
      and(
        eq(deployments.orgId, org.id),
        ne(deployments.projectId, projectId),
        // A crashed app still holds its place: `pier restart` brings it back.
        inArray(deployments.status, ['live', 'crashed', 'building', 'starting']),
        isNull(projects.destroyedAt),
      ),
    );
  if (rows.length >= limit)
    throw orgsErrors.quotaExceeded(
      `The ${org.plan} plan allows ${limit} deployed app${limit === 1 ? '' : 's'} per organization; ` +
        `destroy ${rows.length === 1 ? 'the other one' : 'another'} or upgrade the plan.`,
    );
}

async function fail(deps: Deps, id: string, message: string): Promise<void> {
  await deps.db.orm
    .update(deployments)
    .set({ status: 'failed', errorMessage: message, finishedAt: deps.clock.now() })
    .where(eq(deployments.id, id));
}

/** Downloads, checks and unpacks the artifact into its release folder; returns what kind of app it holds. */
export async function prepareRelease(deps: Deps, d: Deployment): Promise<AppManifest> {
  const tmp = path.join(deps.config.dataDir, 'tmp', `${d.id}.tar.gz`);
  const dir = releaseDirOf(deps, d);
  try {
    const head = await deps.blobs.head(d.artifactKey);
    if (!head) throw hostingErrors.artifactMissing();
    // S3 presigned PUTs cannot bound the size, so it is checked here before anything is read.
    if (head.size > MAX_ARTIFACT_BYTES) throw hostingErrors.artifactTooLarge(MAX_ARTIFACT_BYTES);
    const blob = await deps.blobs.get(d.artifactKey);
    if (!blob) throw hostingErrors.artifactMissing();
    await saveArtifact(blob.body, tmp);
    await checkArtifact(tmp);
    await extractArtifact(tmp, dir);
    return detectApp(dir);
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** Moves an uploaded deployment to `building` and queues the start; bad artifacts and quota are 4xx here. */
export async function queueDeployment(
  deps: Deps,
  d: Deployment,
  project: Project,
  org: Org,
): Promise<Deployment> {
  if (d.status !== 'uploading') throw hostingErrors.deploymentStarted(d.status);
  if (project.status !== 'ready') throw hostingErrors.projectNotReady(project.slug, project.status);
  await assertDeployQuota(deps, org, project.id);
  const head = await deps.blobs.head(d.artifactKey);
  if (!head && deps.clock.now() > d.uploadExpiresAt) throw hostingErrors.uploadExpired();
  let manifest: AppManifest;
  try {
    manifest = await prepareRelease(deps, d);
  } catch (err) {
    // Nothing was uploaded yet: the deployment stays startable.
    if (err instanceof ApiError && err.code === 'ARTIFACT_MISSING') throw err;
    const apiErr =
      err instanceof ApiError ? err : hostingErrors.artifactInvalid('The artifact could not be read.');
    await fail(deps, d.id, apiErr.message);
    throw apiErr;
  }
  const updated = await deps.db.orm.transaction(async (tx) => {
    // The organization row lock serialises concurrent starts so the quota cannot be raced past.
    await tx.execute(sql`select id from ${orgs} where ${orgs.id} = ${org.id} for update`);
    await assertDeployQuota(deps, org, project.id, tx as never);
    const [row] = await tx
      .update(deployments)
      .set({ status: 'building', manifest, startedAt: deps.clock.now() })
      .where(and(eq(deployments.id, d.id), eq(deployments.status, 'uploading')))
      .returning();
    return row;
  });
  if (!updated) throw hostingErrors.deploymentStarted('building');
  await deps.jobs.enqueue('hosting.deploy', { deploymentId: d.id });
  return updated;
}

/** The job: start the version beside the current one, health-check, switch; failure leaves the old serving. */
export async function runDeployment(deps: Deps, supervisor: Supervisor, deploymentId: string): Promise<void> {
  const [row] = await deps.db.orm
    .select({ d: deployments, p: projects })
    .from(deployments)
    .innerJoin(projects, eq(projects.id, deployments.projectId))
    .where(eq(deployments.id, deploymentId));
  if (!row || !['building', 'starting'].includes(row.d.status)) return;
  const { d, p } = row;
  if (p.destroyedAt) {
    await fail(deps, d.id, 'The project was destroyed.');
    return;
  }
  try {
    const dir = releaseDirOf(deps, d);
    let detected = fs.existsSync(dir) && d.manifest ? d.manifest : null;
    if (!detected) {
      // A rollback runs a build kept on disk; once pruned there is nothing to run (rollbackTo says so first).
      if (d.origin === 'rollback')
        throw new Error('The build this rollback needs was pruned; redeploy instead.');
      detected = await prepareRelease(deps, d);
      await deps.db.orm.update(deployments).set({ manifest: detected }).where(eq(deployments.id, d.id));
    }
    // Still `building` while npm runs; a retried job finds node_modules there and skips the build. A rollback
    // never builds: it runs the files its deployment left.
    const manifest =
      d.origin === 'rollback'
        ? detected
        : await supervisor.build({ projectId: p.id, deploymentId: d.id, dir, manifest: detected });
    // The build's last lines are readable before the status that follows them (`pier deploy` prints in order).
    await supervisor.flushLogs().catch(() => {});
    await deps.db.orm
      .update(deployments)
      .set({ status: 'starting', manifest })
      .where(eq(deployments.id, d.id));
    await supervisor.activate({ projectId: p.id, slug: p.slug, deploymentId: d.id, dir, manifest });
  } catch (err) {
    // Its own build/start lines first: `pier deploy` reads them once it sees `failed`.
    await supervisor.flushLogs().catch(() => {});
    await fail(deps, d.id, err instanceof Error ? err.message : String(err));
    await pruneReleases(deps, p.id);
    return;
  }
  await markDeploymentLive(deps, p.id, d.id);
  // The last KEEP_RELEASES builds stay on disk for instant rollbacks; older folders go (release-folders.ts).
  await pruneReleases(deps, p.id);
}

/** After Pier restarts: every live app of a non-destroyed project comes back (in parallel, errors logged). */
export async function recoverLiveApps(deps: Deps, supervisor: Supervisor): Promise<void> {
  const rows = await deps.db.orm
    .select({ d: deployments, p: projects })
    .from(deployments)
    .innerJoin(projects, eq(projects.id, deployments.projectId))
    .where(and(eq(deployments.status, 'live'), isNull(projects.destroyedAt)));
  await Promise.all(
    rows.map(async ({ d, p }) => {
      // The cluster keeps a Kubernetes region's apps running; nothing of them runs on this node.
      if (deps.config.runtime.drivers[p.region]?.kind === 'kubernetes') return;
      try {
        const dir = releaseDirOf(deps, d);
        const manifest = fs.existsSync(dir) && d.manifest ? d.manifest : await prepareRelease(deps, d);
        await supervisor.activate({ projectId: p.id, slug: p.slug, deploymentId: d.id, dir, manifest });
      } catch (err) {
        deps.log.error({ err, project: p.slug, deployment: d.id }, 'could not bring a live app back');
      }
    }),
  );
}
