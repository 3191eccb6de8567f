import { z } from 'zod';
import { offsetPageSchema, offsetQuery } from '../../core/pagination.ts';
import { stepDef, variableDefs } from './definition.ts';
import { RUN_STATUSES, STEP_STATUSES } from './tables.ts';
import { FIRE_OUTCOMES } from './trigger-tables.ts';
import { eventName, limitsDef, triggersDef } from './triggers/config.ts';

// The zod contract of each workflows operation (request and response), one per operation.

const projectSlug = z.string().min(1).max(100);
const slug = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'lower-case letters, digits and -, at most 63 characters');

export const createBody = z.object({
  projectSlug,
  slug,
  name: z.string().min(1).max(200),
  description: z.string().max(2000).optional(),
  steps: z.array(stepDef).max(500).default([]),
  variables: variableDefs.default({}),
  /** Beyond the contract: schedules, events and the inbound webhook that start runs (docs/workflows.md). */
  triggers: triggersDef.default({}),
  /** Beyond the contract: a concurrency key and a rate limit on starts. */
  limits: limitsDef.default({}),
});
export type CreateBody = z.infer<typeof createBody>;

export const patchBody = z.object({
  slug: slug.optional(),
  name: z.string().min(1).max(200).optional(),
  description: z.string().max(2000).nullable().optional(),
  steps: z.array(stepDef).max(500).optional(),
  variables: variableDefs.optional(),
  triggers: triggersDef.optional(),
  limits: limitsDef.optional(),
});
export type PatchBody = z.infer<typeof patchBody>;
/** The update tool's body for agents: steps are those of workflows_create, not repeated (~7 KB of tools/list). */
export const patchToolBody = patchBody.extend({
  steps: z
    .array(z.looseObject({ id: z.string(), type: z.string() }))
    .optional()
    .describe('The whole step list, each step as in workflows_create.'),
});

export const workflowOut = z.object({
  id: z.string(),
  projectSlug: z.string(),
  slug: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  steps: z.array(stepDef),
  variables: variableDefs,
  triggers: triggersDef,
  limits: limitsDef,
  /** The signed inbound webhook URL when `triggers.webhook.enabled` (a secret: anyone with it starts runs). */
  webhookUrl: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type WorkflowOut = z.infer<typeof workflowOut>;

export const idParams = z.object({ id: z.string().max(100) });
export const listQuery = offsetQuery({ defaultLimit: 20, maxLimit: 100 }).extend({ projectSlug });
export const workflowPage = offsetPageSchema(workflowOut);
export const deleted = z.object({ success: z.literal(true) });

export const runBody = z.object({
  projectSlug,
  variables: z.record(z.string(), z.unknown()).default({}),
  webhook: z.object({ url: z.url().max(2000), secret: z.string().min(8).max(500) }).optional(),
  metadata: z.record(z.string(), z.unknown()).default({}),
});
export type RunBody = z.infer<typeof runBody>;

export const stepStateOut = z.object({
  status: z.enum(STEP_STATUSES),
  startedAt: z.string().nullable(),
  completedAt: z.string().nullable(),
  attempts: z.number().int(),
  lastError: z.string().nullable(),
  creditsUsed: z.number(),
  /** Beyond the contract: times the step's worker died under it (not attempts; bounded, docs/workflows.md). */
  crashRecoveries: z.number().int(),
  /** Beyond the contract, loops only: items whose sub-steps all completed, of how many. */
  completedItems: z.number().int().nullable(),
  totalItems: z.number().int().nullable(),
  /** Beyond the contract: a wait step's wait (what, until when, its approval link while it waits). */
  wait: z
    .object({
      kind: z.enum(['sleep', 'event', 'approval']),
      dueAt: z.string().nullable(),
      event: z.string().nullable(),
      approvalUrl: z.string().nullable(),
      decidedAt: z.string().nullable(),
    })
    .optional(),
});

export const runOut = z.object({
  id: z.string(),
  workflowId: z.string(),
  status: z.enum(RUN_STATUSES),
  variables: z.record(z.string(), z.unknown()),
  metadata: z.record(z.string(), z.unknown()),
  output: z.record(z.string(), z.unknown()),
  stepStates: z.record(z.string(), stepStateOut),
  totalSteps: z.number().int(),
  completedSteps: z.number().int(),
  totalDurationMs: z.number().int().nullable(),
  creditsUsed: z.number(),
  error: z.string().nullable(),
  /** Beyond the contract: what started the run, and whether it waits for its concurrency key or schedule. */
  trigger: z.lazy(() => runTriggerOut),
  queued: z.boolean(),
  concurrencyKey: z.string().nullable(),
  startedAt: z.string().nullable(),
  completedAt: z.string().nullable(),
  createdAt: z.string(),
});
export type RunOut = z.infer<typeof runOut>;

export const runCreated = runOut.pick({
  id: true,
  workflowId: true,
  status: true,
  variables: true,
  metadata: true,
  totalSteps: true,
  completedSteps: true,
  createdAt: true,
});

export const runListQuery = offsetQuery({ defaultLimit: 50, maxLimit: 100 }).extend({
  projectSlug,
  workflowId: z.string().max(100).optional(),
  status: z.enum(RUN_STATUSES).optional(),
});
export const runPage = offsetPageSchema(runOut);

export const runTriggerOut = z.object({
  type: z.enum(['api', 'schedule', 'event', 'webhook']),
  ref: z.string().optional(),
  slot: z.string().optional(),
  eventId: z.string().optional(),
});

export const eventBody = z.object({ name: eventName, payload: z.unknown().optional() });
export const eventOut = z.object({
  id: z.string(),
  name: z.string(),
  receivedAt: z.string(),
  runs: z.array(
    z.object({ workflowId: z.string(), runId: z.string(), status: z.enum(['started', 'queued']) }),
  ),
  skipped: z.array(z.object({ workflowId: z.string(), outcome: z.enum(FIRE_OUTCOMES), reason: z.string() })),
  resumedWaits: z.number().int(),
});

const fireOut = z.object({
  firedAt: z.string(),
  slot: z.string().nullable(),
  outcome: z.enum(FIRE_OUTCOMES),
  runId: z.string().nullable(),
  runStatus: z.enum(RUN_STATUSES).nullable(),
  detail: z.string().nullable(),
});
export const triggersOut = z.object({
  schedules: z.array(
    z.object({
      cron: z.string(),
      timezone: z.string(),
      overlap: z.enum(['skip', 'allow', 'queue']),
      catchUp: z.boolean(),
      nextRunAt: z.string().nullable(),
      lastFires: z.array(fireOut),
    }),
  ),
  events: z.array(
    z.object({ name: z.string(), filters: z.array(z.string().nullable()), lastFires: z.array(fireOut) }),
  ),
  webhook: z.object({ enabled: z.boolean(), url: z.string().nullable(), lastFires: z.array(fireOut) }),
});

export const approvalParams = z.object({ id: z.string().max(100), stepId: z.string().max(64) });
export const approvalBody = z.object({ approved: z.boolean(), comment: z.string().max(2000).optional() });
