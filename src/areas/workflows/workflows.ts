import crypto from 'node:crypto';
import { and, count, desc, eq, inArray } from 'drizzle-orm';

import { isProvider, PROVIDERS } from '../../core/ai/providers.ts';
import { isUuid } from '../../core/ids.ts';
import { offsetPage } from '../../core/pagination.ts';
import type { Deps } from '../../deps.ts';
import { modelListed, resolveModelFor } from '../models/index.ts';
import { projectForApiKey, projects } from '../orgs/index.ts';
import { definitionProblems, type StepDef, type VariableDefs } from './definition.ts';
import { workflowsErrors } from './errors.ts';
import { webhookUrl } from './public-links.ts';
import type { CreateBody, PatchBody, WorkflowOut } from './schema.ts';
import { workflows } from './tables.ts';
import { type Limits, type Triggers, triggerProblems } from './triggers/config.ts';
import { syncSchedules } from './triggers/schedules.ts';

// Workflow definitions: CRUD per project, every definition checked (definition.ts) before it is stored.

export type WfScope = { orgId: string; environment: string };
type Row = typeof workflows.$inferSelect;

const tenant = (s: WfScope) => and(eq(workflows.orgId, s.orgId), eq(workflows.environment, s.environment));

/** A step's model as resolveModel knows it: `provider/model` when the step names a provider. */
export const modelRefOf = (s: Pick<StepDef, 'provider' | 'model'>) =>
  s.provider && !s.model?.startsWith(`${s.provider}/`) ? `${s.provider}/${s.model}` : s.model!;

async function validate(
  deps: Deps,
  s: WfScope,
  steps: StepDef[],
  variables: VariableDefs,
  extras: { triggers: Triggers; limits: Limits },
): Promise<void> {
  const problems = await definitionProblems(steps, variables, async (step) => {
    // Checked apart: with Pier's own gateway configured, an unknown `provider/model` would pass as a gateway model.
    if (step.provider && !isProvider(step.provider))
      return `provider '${step.provider}' does not exist (one of ${PROVIDERS.join(', ')}).`;
    let resolved: Awaited<ReturnType<typeof resolveModelFor>>;
    try {
      resolved = await resolveModelFor(deps, s.orgId, modelRefOf(step));
    } catch (err) {
      return `model '${modelRefOf(step)}': ${(err as Error).message}`;
    }
    // Where the provider's model list can be read for the key that would serve the step, a model it does not
    // list is refused now rather than when the run reaches the step; an unreadable list accepts.
    if ((await modelListed(resolved)) === false)
      return `model '${modelRefOf(step)}': ${resolved.provider} does not offer '${resolved.model}' (it is not in the provider's model list for this organization's key).`;
    return null;
  });
  problems.push(...triggerProblems(extras.triggers, extras.limits, deps.clock.now()));
  if (problems.length) throw workflowsErrors.workflowInvalid(problems);
}

export async function toWorkflowOuts(deps: Deps, rows: Row[]): Promise<WorkflowOut[]> {
  if (!rows.length) return [];
  const ids = [...new Set(rows.map((r) => r.projectId))];
  const prj = await deps.db.orm
    .select({ id: projects.id, slug: projects.slug })
    .from(projects)
    .where(inArray(projects.id, ids));
  const slugOf = new Map(prj.map((p) => [p.id, p.slug]));
  return rows.map((r) => ({
    id: r.id,
    projectSlug: slugOf.get(r.projectId) ?? '',
    slug: r.slug,
    name: r.name,
    description: r.description,
    steps: r.steps,
    variables: r.variables,
    triggers: r.triggers,
    limits: r.limits,
    webhookUrl: r.triggers.webhook?.enabled && r.hookNonce ? webhookUrl(deps, r.id, r.hookNonce) : null,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  }));
}

export async function findWorkflow(deps: Deps, s: WfScope, id: string): Promise<Row> {
  if (!isUuid(id)) throw workflowsErrors.workflowNotFound();
  const [row] = await deps.db.orm
    .select()
    .from(workflows)
    .where(and(tenant(s), eq(workflows.id, id)));
  if (!row) throw workflowsErrors.workflowNotFound();
  return row;
}

async function slugFree(deps: Deps, s: WfScope, projectId: string, slug: string, except?: string) {
  const [hit] = await deps.db.orm
    .select({ id: workflows.id })
    .from(workflows)
    .where(and(tenant(s), eq(workflows.projectId, projectId), eq(workflows.slug, slug)));
  if (hit && hit.id !== except) throw workflowsErrors.workflowSlugTaken(slug);
}

export async function createWorkflow(deps: Deps, s: WfScope, body: CreateBody): Promise<WorkflowOut> {
  const project = await projectForApiKey(deps, s.orgId, body.projectSlug);
  const extras = { triggers: body.triggers, limits: body.limits };
  await validate(deps, s, body.steps, body.variables, extras);
  await slugFree(deps, s, project.id, body.slug);
  const now = deps.clock.now();
  const [row] = await deps.db.orm
    .insert(workflows)
    .values({
      orgId: s.orgId,
      environment: s.environment,
      projectId: project.id,
      slug: body.slug,
      name: body.name,
      description: body.description ?? null,
      steps: body.steps,
      variables: body.variables,
      ...extras,
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoNothing()
    .returning();
  if (!row) throw workflowsErrors.workflowSlugTaken(body.slug);
  return synced(deps, row);
}

export async function getWorkflow(deps: Deps, s: WfScope, id: string): Promise<WorkflowOut> {
  return (await toWorkflowOuts(deps, [await findWorkflow(deps, s, id)]))[0]!;
}

export async function listWorkflows(
  deps: Deps,
  s: WfScope,
  q: { projectSlug: string; limit: number; offset: number },
) {
  const project = await projectForApiKey(deps, s.orgId, q.projectSlug);
  const where = and(tenant(s), eq(workflows.projectId, project.id));
  const [rows, [total]] = await Promise.all([
    deps.db.orm
      .select()
      .from(workflows)
      .where(where)
      .orderBy(desc(workflows.createdAt), desc(workflows.id))
      .limit(q.limit)
      .offset(q.offset),
    deps.db.orm.select({ n: count() }).from(workflows).where(where),
  ]);
  return offsetPage(await toWorkflowOuts(deps, rows), total?.n ?? 0, q);
}

export async function patchWorkflow(deps: Deps, s: WfScope, id: string, body: PatchBody) {
  const row = await findWorkflow(deps, s, id);
  const steps = body.steps ?? row.steps;
  const variables = body.variables ?? row.variables;
  const extras = { triggers: body.triggers ?? row.triggers, limits: body.limits ?? row.limits };
  await validate(deps, s, steps, variables, extras);
  if (body.slug && body.slug !== row.slug) await slugFree(deps, s, row.projectId, body.slug, row.id);
  const [updated] = await deps.db.orm
    .update(workflows)
    .set({
      slug: body.slug ?? row.slug,
      name: body.name ?? row.name,
      description: body.description === undefined ? row.description : body.description,
      steps,
      variables,
      ...extras,
      updatedAt: deps.clock.now(),
    })
    .where(and(tenant(s), eq(workflows.id, row.id)))
    .returning();
  return synced(deps, updated!);
}

/** Schedule rows and the webhook's nonce follow the stored triggers. */
async function synced(deps: Deps, row: Row): Promise<WorkflowOut> {
  await syncSchedules(deps, row);
  const [fresh] = await deps.db.orm.select().from(workflows).where(eq(workflows.id, row.id));
  return (await toWorkflowOuts(deps, [fresh ?? row]))[0]!;
}

/** A new inbound webhook URL; the old one stops working at once. */
export async function rotateWebhook(deps: Deps, s: WfScope, id: string): Promise<WorkflowOut> {
  const row = await findWorkflow(deps, s, id);
  if (!row.triggers.webhook?.enabled) throw workflowsErrors.webhookNotFound();
  await deps.db.orm
    .update(workflows)
    .set({ hookNonce: crypto.randomBytes(12).toString('base64url') })
    .where(eq(workflows.id, row.id));
  return getWorkflow(deps, s, row.id);
}

/** Runs keep their own copy of the definition, so they outlive the workflow (and stay readable). */
export async function deleteWorkflow(deps: Deps, s: WfScope, id: string) {
  const row = await findWorkflow(deps, s, id);
  await deps.db.orm.delete(workflows).where(and(tenant(s), eq(workflows.id, row.id)));
  return { success: true as const };
}
