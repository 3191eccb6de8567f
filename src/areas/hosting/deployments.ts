import { and, eq, inArray, isNull } from 'drizzle-orm';
import { z } from 'zod';
import type { ErrorCode } from '../../core/errors.ts';
import { isUuid } from '../../core/ids.ts';
import type { Deps } from '../../deps.ts';
import { users } from '../identity/index.ts';
import { memberships, type Org, orgs, type Project, projects } from '../orgs/index.ts';
import { assertDeployQuota, type Deployment } from './deploy-pipeline.ts';
import { hostingErrors } from './errors.ts';
import { releaseKept } from './release-folders.ts';
import { MAX_ARTIFACT_BYTES } from './runtime/artifact.ts';
import { deployments } from './runtime/tables.ts';

// Deployments as the function API (deployments-fn.ts) shows and opens them: their shape and URL, a new one
// with its presigned upload, one found for a user, and the errors the functions answer.

const UPLOAD_TTL_SEC = 15 * 60;

export const deploymentSchema = z.object({
  id: z.string(),
  projectId: z.string(),
  projectSlug: z.string(),
  status: z.enum(['uploading', 'building', 'starting', 'live', 'crashed', 'failed', 'superseded']),
  appType: z.enum(['static', 'node']).nullable(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  liveAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  errorMessage: z.string().optional(),
  url: z.string(),
  /** deploy: an upload; redeploy: a rebuild of sourceId's artifact; rollback: sourceId's kept build run again. */
  origin: z.enum(['deploy', 'redeploy', 'rollback']),
  sourceId: z.string().nullable(),
  /** What the build detected (e.g. vite, sveltekit, express), else the app type. */
  kind: z.string().nullable(),
  buildMs: z.number().nullable(),
  /** Who asked: the person's e-mail address, or 'platform key <keyId>'. */
  deployedBy: z.string(),
  /** Its build is still on disk, so a rollback to it is instant. */
  buildKept: z.boolean(),
});

export function appUrl(deps: Deps, slug: string): string {
  const scheme = deps.config.publicUrl.startsWith('https:') ? 'https' : 'http';
  return `${scheme}://${slug}.${deps.config.appsDomain}`;
}

/** E-mail addresses of the people who made these deployments, by their createdBy ('user:<id>'). */
export async function deployers(deps: Deps, rows: Deployment[]): Promise<Map<string, string>> {
  const ids = [
    ...new Set(
      rows.flatMap((r) =>
        r.createdBy.startsWith('user:') && isUuid(r.createdBy.slice(5)) ? [r.createdBy.slice(5)] : [],
      ),
    ),
  ];
  if (!ids.length) return new Map();
  const found = await deps.db.orm
    .select({ id: users.id, email: users.email })
    .from(users)
    .where(inArray(users.id, ids));
  return new Map(found.map((u) => [`user:${u.id}`, u.email]));
}

function who(createdBy: string, names?: Map<string, string>): string {
  if (createdBy.startsWith('platform:')) return `platform key ${createdBy.slice(9)}`;
  return names?.get(createdBy) ?? 'a former member';
}

export function toDeployment(
  deps: Deps,
  d: Deployment,
  slug: string,
  names?: Map<string, string>,
): z.infer<typeof deploymentSchema> {
  const iso = (x: Date | null) => (x ? x.toISOString() : null);
  const out: z.infer<typeof deploymentSchema> = {
    id: d.id,
    projectId: d.projectId,
    projectSlug: slug,
    status: d.status,
    appType: d.manifest?.type ?? null,
    createdAt: d.createdAt.toISOString(),
    startedAt: iso(d.startedAt),
    liveAt: iso(d.liveAt),
    finishedAt: iso(d.finishedAt),
    url: appUrl(deps, slug),
    origin: d.origin,
    sourceId: d.sourceId,
    kind: d.manifest?.kind ?? d.manifest?.type ?? null,
    buildMs: typeof d.manifest?.buildMs === 'number' ? d.manifest.buildMs : null,
    deployedBy: who(d.createdBy, names),
    buildKept: d.liveAt !== null && releaseKept(deps, d),
  };
  // Why it failed, or why it crashed (supervisor.ts: the crash-loop rule).
  if ((d.status === 'failed' || d.status === 'crashed') && d.errorMessage) out.errorMessage = d.errorMessage;
  return out;
}

/** Opens a deployment in `uploading` with its presigned upload URL: the work of the wire `createDeployment`. */
export async function openDeployment(deps: Deps, project: Project, org: Org, createdBy: string) {
  if (project.status !== 'ready') throw hostingErrors.projectNotReady(project.slug, project.status);
  await assertDeployQuota(deps, org, project.id);
  const now = deps.clock.now();
  const [d] = await deps.db.orm
    .insert(deployments)
    .values({
      projectId: project.id,
      orgId: org.id,
      status: 'uploading',
      artifactKey: 'pending',
      createdBy,
      createdAt: now,
      uploadExpiresAt: new Date(now.getTime() + UPLOAD_TTL_SEC * 1000),
    })
    .returning();
  const artifactKey = `artifacts/${project.id}/${d!.id}.tar.gz`;
  await deps.db.orm.update(deployments).set({ artifactKey }).where(eq(deployments.id, d!.id));
  const put = await deps.blobs.presignPut(artifactKey, {
    expiresInSec: UPLOAD_TTL_SEC,
    maxBytes: MAX_ARTIFACT_BYTES,
    contentType: 'application/gzip',
  });
  return {
    deploymentId: d!.id,
    uploadUrl: put.url,
    uploadHeaders: put.headers,
    expiresAt: put.expiresAt.toISOString(),
    maxBytes: MAX_ARTIFACT_BYTES,
  };
}

export const createOutput = z.object({
  deploymentId: z.string(),
  uploadUrl: z.string(),
  uploadHeaders: z.record(z.string(), z.string()),
  expiresAt: z.string(),
  maxBytes: z.number(),
});

/** A deployment of a live project in one of the user's organizations, with the user's role there. */
export async function deploymentForUser(deps: Deps, userId: string, id: string) {
  if (!isUuid(id)) throw hostingErrors.deploymentNotFound(id.slice(0, 100));
  const [row] = await deps.db.orm
    .select({ d: deployments, project: projects, org: orgs, role: memberships.role })
    .from(deployments)
    .innerJoin(projects, eq(projects.id, deployments.projectId))
    .innerJoin(orgs, eq(orgs.id, projects.orgId))
    .innerJoin(memberships, and(eq(memberships.orgId, projects.orgId), eq(memberships.userId, userId)))
    .where(and(eq(deployments.id, id), isNull(projects.destroyedAt)));
  if (!row) throw hostingErrors.deploymentNotFound(id);
  return row;
}

export async function deploymentById(deps: Deps, id: string) {
  if (!isUuid(id)) throw hostingErrors.deploymentNotFound(id.slice(0, 100));
  const [row] = await deps.db.orm
    .select({ d: deployments, project: projects, org: orgs })
    .from(deployments)
    .innerJoin(projects, eq(projects.id, deployments.projectId))
    .innerJoin(orgs, eq(orgs.id, projects.orgId))
    .where(and(eq(deployments.id, id), isNull(projects.destroyedAt)));
  if (!row) throw hostingErrors.deploymentNotFound(id);
  return row;
}

export const DEPLOY_ERRORS: readonly ErrorCode[] = [
  'PROJECT_NOT_FOUND',
  'PROJECT_NOT_READY',
  'QUOTA_EXCEEDED',
];
export const START_ERRORS: readonly ErrorCode[] = [
  'DEPLOYMENT_NOT_FOUND',
  'DEPLOYMENT_ALREADY_STARTED',
  'ARTIFACT_MISSING',
  'ARTIFACT_INVALID',
  'ARTIFACT_TOO_LARGE',
  'UPLOAD_EXPIRED',
  'PROJECT_NOT_READY',
  'QUOTA_EXCEEDED',
];
