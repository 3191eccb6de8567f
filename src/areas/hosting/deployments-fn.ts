import { and, desc, eq, isNull } from 'drizzle-orm';
import { z } from 'zod';
import { audit } from '../../core/audit/audit.ts';
import { isUuid, uuidInput } from '../../core/ids.ts';
import { defineFn } from '../../http/fn-kit.ts';
import {
  MANAGERS,
  orgs,
  orgsErrors,
  projectForUser,
  projects,
  requireRole,
  slugInput,
} from '../orgs/index.ts';
import { queueDeployment } from './deploy-pipeline.ts';
import {
  createOutput,
  DEPLOY_ERRORS,
  deployers,
  deploymentById,
  deploymentForUser,
  deploymentSchema,
  openDeployment,
  START_ERRORS,
  toDeployment,
} from './deployments.ts';
import { syncKubeLogs } from './kubernetes/deploy.ts';
import { readAppLogs } from './runtime/app-logs.ts';
import { deployments } from './runtime/tables.ts';

// Deployments on the function API: create (presigned upload), start, follow, list, and the app's logs.

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
    return toDeployment(deps, started, project.slug, await deployers(deps, [started]));
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
    return toDeployment(deps, started, project.slug, await deployers(deps, [started]));
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
    return toDeployment(deps, d, project.slug, await deployers(deps, [d]));
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
    return toDeployment(deps, d, project.slug, await deployers(deps, [d]));
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
    const names = await deployers(deps, rows);
    return rows.map((d) => toDeployment(deps, d, project.slug, names));
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
    /** build: the builds' output; runtime: the apps' own output and Pier's notes once started. */
    phase: z.enum(['build', 'runtime']).optional(),
  }),
  output: z.object({
    lines: z.array(
      z.object({
        id: z.number(),
        ts: z.string(),
        stream: z.enum(['stdout', 'stderr', 'system']),
        line: z.string(),
        deploymentId: z.string().nullable(),
        phase: z.enum(['build', 'runtime']).nullable(),
      }),
    ),
  }),
  errors: ['PROJECT_NOT_FOUND'],
  handler: async ({ deps, caller }, { projectSlug, limit, since, afterId, deploymentId, phase }) => {
    const { project } = await projectForUser(deps, caller.userId, projectSlug);
    // A Kubernetes region's app prints into its pods: their new lines are copied in first.
    await syncKubeLogs(deps, project).catch((err) =>
      deps.log.warn({ err, project: project.slug }, 'could not read the pods’ logs'),
    );
    const rows = await readAppLogs(deps, project.id, {
      limit: limit ?? 100,
      since: since ? new Date(since) : undefined,
      afterId,
      deploymentId,
      phase,
    });
    return {
      lines: rows.map((r) => ({
        id: r.id,
        ts: r.ts.toISOString(),
        stream: r.stream,
        line: r.line,
        deploymentId: r.deploymentId,
        phase: r.phase,
      })),
    };
  },
});
