import { and, desc, eq, isNotNull } from 'drizzle-orm';
import type { Deps } from '../../deps.ts';
import type { Org, Project } from '../orgs/index.ts';
import { assertDeployQuota, type Deployment } from './deploy-pipeline.ts';
import { hostingErrors } from './errors.ts';
import { releaseKept } from './release-folders.ts';
import { type DeploymentOrigin, deployments } from './runtime/tables.ts';

// Rollback and redeploy: both make a new deployment row (the history says who did what, when), started by the
// same `hosting.deploy` job as an upload, so the new version starts beside the live one and is swapped in once
// healthy. A rollback runs the build kept on disk (release-folders.ts): no download, no npm, no build. A
// redeploy rebuilds from the stored artifact: fresh install and build, with today's build-time settings.

/** The project's deployment with this id; another project's or another organization's is not found. */
async function inProject(deps: Deps, project: Project, id: string): Promise<Deployment> {
  const [d] = await deps.db.orm
    .select()
    .from(deployments)
    .where(and(eq(deployments.id, id), eq(deployments.projectId, project.id)));
  if (!d) throw hostingErrors.deploymentNotFound(id);
  return d;
}

/** The deployment live before the current one: the latest that went live and is not live now. */
async function previousLive(deps: Deps, project: Project): Promise<Deployment> {
  const rows = await deps.db.orm
    .select()
    .from(deployments)
    .where(and(eq(deployments.projectId, project.id), isNotNull(deployments.liveAt)))
    .orderBy(desc(deployments.liveAt))
    .limit(20);
  const live = rows.find((r) => r.status === 'live');
  const liveRelease = live ? (live.releaseId ?? live.id) : null;
  const prev = rows.find((r) => r.status === 'superseded' && (r.releaseId ?? r.id) !== liveRelease);
  if (!prev) throw hostingErrors.nothingToRollBack(project.slug);
  return prev;
}

async function startFrom(
  deps: Deps,
  src: Deployment,
  o: { project: Project; org: Org; createdBy: string; origin: DeploymentOrigin },
): Promise<Deployment> {
  if (o.project.status !== 'ready') throw hostingErrors.projectNotReady(o.project.slug, o.project.status);
  await assertDeployQuota(deps, o.org, o.project.id);
  const now = deps.clock.now();
  const rollback = o.origin === 'rollback';
  const [d] = await deps.db.orm
    .insert(deployments)
    .values({
      projectId: src.projectId,
      orgId: src.orgId,
      status: rollback ? 'starting' : 'building',
      artifactKey: src.artifactKey,
      manifest: rollback ? src.manifest : null,
      createdBy: o.createdBy,
      createdAt: now,
      uploadExpiresAt: now,
      startedAt: now,
      origin: o.origin,
      sourceId: src.id,
      releaseId: rollback ? (src.releaseId ?? src.id) : null,
    })
    .returning();
  await deps.jobs.enqueue('hosting.deploy', { deploymentId: d!.id });
  return d!;
}

/** Runs an earlier build again at once (default: the one live before the current one). */
export async function rollbackTo(
  deps: Deps,
  o: { project: Project; org: Org; createdBy: string; deploymentId?: string },
): Promise<Deployment> {
  const src = o.deploymentId
    ? await inProject(deps, o.project, o.deploymentId)
    : await previousLive(deps, o.project);
  if (!src.liveAt) throw hostingErrors.notReusable(src.id, `it never went live (${src.status})`);
  if (src.status === 'live') throw hostingErrors.notReusable(src.id, 'it is the live deployment');
  if (!releaseKept(deps, src)) throw hostingErrors.releasePruned(src.id);
  return startFrom(deps, src, { ...o, origin: 'rollback' });
}

/** Builds an earlier deployment's artifact again (default: the live one) and deploys it. */
export async function redeployFrom(
  deps: Deps,
  o: { project: Project; org: Org; createdBy: string; deploymentId?: string },
): Promise<Deployment> {
  let src: Deployment | undefined;
  if (o.deploymentId) src = await inProject(deps, o.project, o.deploymentId);
  else
    [src] = await deps.db.orm
      .select()
      .from(deployments)
      .where(and(eq(deployments.projectId, o.project.id), isNotNull(deployments.liveAt)))
      .orderBy(desc(deployments.liveAt))
      .limit(1);
  if (!src) throw hostingErrors.nothingToRedeploy(o.project.slug);
  if (src.status === 'uploading') throw hostingErrors.notReusable(src.id, 'nothing was uploaded yet');
  if (!(await deps.blobs.head(src.artifactKey)))
    throw hostingErrors.notReusable(src.id, 'its artifact is no longer stored');
  return startFrom(deps, src, { ...o, origin: 'redeploy' });
}
