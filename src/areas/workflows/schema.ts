import { z } from 'zod';
import { offsetPageSchema, offsetQuery } from '../../core/pagination.ts';
import { stepDef, variableDefs } from './definition.ts';
import { RUN_STATUSES, STEP_STATUSES } from './tables.ts';

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
});
export type CreateBody = z.infer<typeof createBody>;

export const patchBody = z.object({
  slug: slug.optional(),
  name: z.string().min(1).max(200).optional(),
  description: z.string().max(2000).nullable().optional(),
  steps: z.array(stepDef).max(500).optional(),
  variables: variableDefs.optional(),
});
export type PatchBody = z.infer<typeof patchBody>;

export const workflowOut = z.object({
  id: z.string(),
  projectSlug: z.string(),
  slug: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  steps: z.array(stepDef),
  variables: variableDefs,
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
