import { and, desc, eq, isNull } from 'drizzle-orm';
import { z } from 'zod';
import { audit } from '../../core/audit/audit.ts';
import type { ErrorCode, errors } from '../../core/errors.ts';
import { isUuid, uuidInput } from '../../core/ids.ts';
import type { Deps } from '../../deps.ts';
import { defineFn } from '../../http/fn-kit.ts';
import {
  MANAGERS,
  memberships,
  type Org,
  orgs,
  orgsErrors,
  type Project,
  projectForUser,
  projects,
  requireRole,
  slugInput,
} from '../orgs/index.ts';
import { assertDeployQuota, type Deployment, queueDeployment } from './deploy-pipeline.ts';
import { hostingErrors } from './errors.ts';
import { readAppLogs } from './runtime/app-logs.ts';
import { MAX_ARTIFACT_BYTES } from './runtime/artifact.ts';
import { deployments } from './runtime/tables.ts';

// Deployments on the function API: create (presigned upload), start, follow, list, and the app's logs.

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
});

export function appUrl(deps: Deps, slug: string): string {
  const scheme = deps.config.publicUrl.startsWith('https:') ? 'https' : 'http';
  return `${scheme}://${slug}.${deps.config.appsDomain}`;
}

function toDeployment(deps: Deps, d: Deployment, slug: string): z.infer<typeof deploymentSchema> {
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
  };
  // Why it failed, or why it crashed (supervisor.ts: the crash-loop rule).
  if ((d.status === 'failed' || d.status === 'crashed') && d.errorMessage) out.errorMessage = d.errorMessage;
  return out;
}

/** Opens a deployment in `uploading` with its presigned upload URL: the work of the wire `createDeployment`. */
async function openDeployment(deps: Deps, project: Project, org: Org, createdBy: string) {
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

const createOutput = z.object({
  deploymentId: z.string(),
  uploadUrl: z.string(),
  uploadHeaders: z.record(z.string(), z.string()),
  expiresAt: z.string(),
  maxBytes: z.number(),
});

/** A deployment of a live project in one of the user's organizations, with the user's role there. */
async function deploymentForUser(deps: Deps, userId: string, id: string) {
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

async function deploymentById(deps: Deps, id: string) {
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

const DEPLOY_ERRORS: readonly ErrorCode[] = ['PROJECT_NOT_FOUND', 'PROJECT_NOT_READY', 'QUOTA_EXCEEDED'];
const START_ERRORS: readonly ErrorCode[] = [
  'DEPLOYMENT_NOT_FOUND',
  'DEPLOYMENT_ALREADY_STARTED',
  'ARTIFACT_MISSING',
  'ARTIFACT_INVALID',
  'ARTIFACT_TOO_LARGE',
  'UPLOAD_EXPIRED',
  'PROJECT_NOT_READY',
  'QUOTA_EXCEEDED',
];

export const createDeploymentForCli = defineFn({
  name: 'createDeploymentForCli',
  minRole: 'manager',
  summary:
    'Creates a deployment of a project (owner or admin) and a presigned URL to PUT its .tar.gz artifact (≤ 100 MB).',
  auth: { kind: 'user' },
  input: z.strictObject({ projectSlug: slugInput }),
  output: createOutput,
  errors: DEPLOY_ERRORS,
  handler: async ({ deps, caller }, { projectSlug }) => {
    const { project, org, role } = await projectForUser(deps, caller.userId, projectSlug);
    requireRole(role, MANAGERS);
    const out = await openDeployment(deps, project, org, `user:${caller.userId}`);
    await audit(deps, { kind: 'user', id: caller.userId }, 'deployment.create', org.id, {
      project: project.slug,
      deploymentId: out.deploymentId,
    });
    return out;
  },
});

export const createDeploymentFn = defineFn({
  name: 'createDeployment',
  summary: 'Scope deploy: creates a deployment of an existing project and a presigned upload URL.',
  auth: { kind: 'platform', scope: 'deploy' },
  input: z.strictObject({ projectId: z.string().max(100) }),
  output: createOutput,
  errors: DEPLOY_ERRORS,
  handler: async ({ deps, caller }, { projectId }) => {
    if (!isUuid(projectId)) throw orgsErrors.projectNotFound();
    const [row] = await deps.db.orm
      .select({ project: projects, org: orgs })
      .from(projects)
      .innerJoin(orgs, eq(orgs.id, projects.orgId))
      .where(and(eq(projects.id, projectId), isNull(projects.destroyedAt)));
    if (!row) throw orgsErrors.projectNotFound();
    const out = await openDeployment(deps, row.project, row.org, `platform:${caller.keyId}`);
    await audit(deps, { kind: 'platform', id: caller.keyId }, 'deployment.create', row.org.id, {
      project: row.project.slug,
      deploymentId: out.deploymentId,
    });
    return out;
  },
});

export const startDeploymentForCli = defineFn({
  name: 'startDeploymentForCli',
  minRole: 'manager',
  summary:
    'Checks the uploaded artifact and starts the deployment; it goes live once its health check passes.',
  auth: { kind: 'user' },
  input: z.strictObject({ deploymentId: z.string().max(100) }),
  output: deploymentSchema,
  errors: START_ERRORS,
  handler: async ({ deps, caller }, { deploymentId }) => {
    const { d, project, org, role } = await deploymentForUser(deps, caller.userId, deploymentId);
    requireRole(role, MANAGERS);
    const started = await queueDeployment(deps, d, project, org);
    return toDeployment(deps, started, project.slug);
  },
});

export const startDeploymentFn = defineFn({
  name: 'startDeployment',
  summary: 'Scope deploy: checks the uploaded artifact and starts the deployment.',
  auth: { kind: 'platform', scope: 'deploy' },
  input: z.strictObject({ deploymentId: z.string().max(100) }),
  output: deploymentSchema,
  errors: START_ERRORS,
  handler: async ({ deps }, { deploymentId }) => {
    const { d, project, org } = await deploymentById(deps, deploymentId);
    const started = await queueDeployment(deps, d, project, org);
    return toDeployment(deps, started, project.slug);
  },
});

export const getDeploymentForCli = defineFn({
  name: 'getDeploymentForCli',
  summary: 'One deployment: status, timestamps, errorMessage when it failed, and the app URL.',
  auth: { kind: 'user' },
  input: z.strictObject({ deploymentId: z.string().max(100) }),
  output: deploymentSchema,
  errors: ['DEPLOYMENT_NOT_FOUND'],
  handler: async ({ deps, caller }, { deploymentId }) => {
    const { d, project } = await deploymentForUser(deps, caller.userId, deploymentId);
    return toDeployment(deps, d, project.slug);
  },
});

export const getDeploymentFn = defineFn({
  name: 'getDeployment',
  summary: 'Scope deploy: one deployment, to follow it to live or failed.',
  auth: { kind: 'platform', scope: 'deploy' },
  input: z.strictObject({ deploymentId: z.string().max(100) }),
  output: deploymentSchema,
  errors: ['DEPLOYMENT_NOT_FOUND'],
  handler: async ({ deps }, { deploymentId }) => {
    const { d, project } = await deploymentById(deps, deploymentId);
    return toDeployment(deps, d, project.slug);
  },
});

export const listDeploymentsForCli = defineFn({
  name: 'listDeploymentsForCli',
  summary: "A project's deployments, newest first (at most 100).",
  auth: { kind: 'user' },
  input: z.strictObject({ projectSlug: slugInput, limit: z.number().int().min(1).max(100).optional() }),
  output: z.array(deploymentSchema),
  errors: ['PROJECT_NOT_FOUND'],
  handler: async ({ deps, caller }, { projectSlug, limit }) => {
    const { project } = await projectForUser(deps, caller.userId, projectSlug);
    const rows = await deps.db.orm
      .select()
      .from(deployments)
      .where(eq(deployments.projectId, project.id))
      .orderBy(desc(deployments.createdAt), desc(deployments.id))
      .limit(limit ?? 100);
    return rows.map((d) => toDeployment(deps, d, project.slug));
  },
});

export const getAppLogsForCli = defineFn({
  name: 'getAppLogsForCli',
  summary: "The app's stdout/stderr (and Pier's notes about it), newest last; since is an ISO time.",
  auth: { kind: 'user' },
  input: z.strictObject({
    projectSlug: slugInput,
    limit: z.number().int().min(1).max(1000).optional(),
    since: z.iso.datetime({ offset: true }).optional(),
    afterId: z.number().int().min(0).optional(),
    /** Only this deployment's lines (its build output and Pier's notes about it). */
    deploymentId: uuidInput.optional(),
  }),
  output: z.object({
    lines: z.array(
      z.object({
        id: z.number(),
        ts: z.string(),
        stream: z.enum(['stdout', 'stderr', 'system']),
        line: z.string(),
        deploymentId: z.string().nullable(),
      }),
    ),
  }),
  errors: ['PROJECT_NOT_FOUND'],
  handler: async ({ deps, caller }, { projectSlug, limit, since, afterId, deploymentId }) => {
    const { project } = await projectForUser(deps, caller.userId, projectSlug);
    const rows = await readAppLogs(deps, project.id, {
      limit: limit ?? 100,
      since: since ? new Date(since) : undefined,
      afterId,
      deploymentId,
    });
    return {
      lines: rows.map((r) => ({
        id: r.id,
        ts: r.ts.toISOString(),
        stream: r.stream,
        line: r.line,
        deploymentId: r.deploymentId,
      })),
    };
  },
});
