import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { orgForUser, projectForApiKey, slugInput } from '../orgs/index.ts';
import { workflowsErrors } from './errors.ts';
import { getRun, startRun } from './runs.ts';
import { runOut } from './schema.ts';
import { workflows } from './tables.ts';

// The CLI's door to runs (`pier workflows run <slug> --var k=v`): any member of the organization starts a
// run of a project's workflow with their own token and follows it; the same services as the v1 routes.

const environment = z.enum(['production', 'sandbox']).default('production');

async function scopeOf(deps: Deps, userId: string, orgSlug: string, env: 'production' | 'sandbox') {
  const { org } = await orgForUser(deps, userId, orgSlug);
  return { orgId: org.id, environment: env };
}

export const runWorkflowForCli = defineFn({
  name: 'runWorkflowForCli',
  summary: "Starts a run of a project's workflow (by slug) with the given variables (any member).",
  auth: { kind: 'user' },
  input: z.strictObject({
    orgSlug: slugInput,
    projectSlug: z.string().min(1).max(100),
    workflowSlug: z.string().min(1).max(63),
    environment,
    variables: z.record(z.string(), z.unknown()).default({}),
  }),
  output: runOut,
  errors: ['ORG_NOT_FOUND', 'PROJECT_NOT_FOUND', 'WORKFLOW_NOT_FOUND', 'WORKFLOW_VARIABLES_INVALID'],
  handler: async ({ deps, caller }, input) => {
    const s = await scopeOf(deps, caller.userId, input.orgSlug, input.environment);
    const project = await projectForApiKey(deps, s.orgId, input.projectSlug);
    const [wf] = await deps.db.orm
      .select({ id: workflows.id })
      .from(workflows)
      .where(
        and(
          eq(workflows.orgId, s.orgId),
          eq(workflows.environment, s.environment),
          eq(workflows.projectId, project.id),
          eq(workflows.slug, input.workflowSlug),
        ),
      );
    if (!wf) throw workflowsErrors.workflowNotFound();
    const run = await startRun(deps, s, wf.id, {
      projectSlug: input.projectSlug,
      variables: input.variables,
      metadata: { source: 'cli' },
    });
    return getRun(deps, s, run.id);
  },
});

export const getWorkflowRunForCli = defineFn({
  name: 'getWorkflowRunForCli',
  summary: 'A workflow run with its step states (any member).',
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput, environment, runId: z.string().max(100) }),
  output: runOut,
  errors: ['ORG_NOT_FOUND', 'WORKFLOW_RUN_NOT_FOUND'],
  handler: async ({ deps, caller }, input) =>
    getRun(deps, await scopeOf(deps, caller.userId, input.orgSlug, input.environment), input.runId),
});
