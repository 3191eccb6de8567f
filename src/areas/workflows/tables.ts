import { sql } from 'drizzle-orm';
import {
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import type { StepDef, VariableDefs } from './definition.ts';
import type { Limits, RunTrigger, Triggers } from './triggers/config.ts';

// Workflows: every row carries its organization and environment (production for live keys, sandbox for
// test keys). A run is a row; each of its steps is a row of workflow_step_states, written when the step
// finishes, so a restarted worker resumes at the first unfinished step and never repeats a finished one
// (docs/workflows.md). Workers claim ready step rows with FOR UPDATE SKIP LOCKED and hold a lease on them.

export const RUN_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/**
 * pending: waits for dependencies; ready: claimable (at nextAttemptAt); running: leased by a worker;
 * waiting: a `wait` step, held by no worker (workflow_waits).
 */
export const STEP_STATUSES = [
  'pending',
  'ready',
  'running',
  'waiting',
  'completed',
  'failed',
  'skipped',
] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

export const workflows = pgTable(
  'workflows',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').notNull(),
    projectId: uuid('project_id').notNull(),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    description: text('description'),
    steps: jsonb('steps').$type<StepDef[]>().notNull(),
    variables: jsonb('variables').$type<VariableDefs>().notNull(),
    triggers: jsonb('triggers').$type<Triggers>().notNull().default({}),
    limits: jsonb('limits').$type<Limits>().notNull().default({}),
    /** Part of what the inbound webhook URL signs: rotating it kills the old URL. Not a secret alone. */
    hookNonce: text('hook_nonce'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    uniqueIndex('workflows_project_slug_idx').on(t.orgId, t.environment, t.projectId, t.slug),
    index('workflows_tenant_created_idx').on(t.orgId, t.environment, t.createdAt),
  ],
);

export const workflowRuns = pgTable(
  'workflow_runs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').notNull(),
    projectId: uuid('project_id').notNull(),
    workflowId: uuid('workflow_id').notNull(),
    status: text('status').$type<RunStatus>().notNull(),
    /** The definition as it was when the run started: editing the workflow never changes a run. */
    steps: jsonb('steps').$type<StepDef[]>().notNull(),
    variables: jsonb('variables').$type<Record<string, unknown>>().notNull(),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    output: jsonb('output').$type<Record<string, unknown>>().notNull().default({}),
    error: text('error'),
    webhookUrl: text('webhook_url'),
    /** Encrypted with the keyring; never returned. */
    webhookSecretEnc: text('webhook_secret_enc'),
    creditsUsed: doublePrecision('credits_used').notNull().default(0),
    /** What started it: `{ type: api | schedule | event | webhook, ref?, slot?, eventId? }`. */
    trigger: jsonb('trigger').$type<RunTrigger>().notNull().default({ type: 'api' }),
    /** `schedule:<ref>`, `event:<name>` or `webhook` (null for API calls): overlap checks and trigger history. */
    triggerRef: text('trigger_ref'),
    /** A run waiting for its concurrency key or its schedule's previous run: pending, no step promoted. */
    held: boolean('held').notNull().default(false),
    concurrencyKey: text('concurrency_key'),
    /** Runs sharing it run one at a time (a schedule with overlap `queue`). */
    serialKey: text('serial_key'),
    startedAt: timestamp('started_at', { withTimezone: true }),
    completedAt: timestamp('completed_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    index('workflow_runs_held_idx').on(t.workflowId, t.createdAt).where(sql`held`),
    index('workflow_runs_tenant_created_idx').on(t.orgId, t.environment, t.projectId, t.createdAt),
    index('workflow_runs_workflow_idx').on(t.workflowId),
  ],
);

export const workflowStepStates = pgTable(
  'workflow_step_states',
  {
    runId: uuid('run_id')
      .notNull()
      .references(() => workflowRuns.id, { onDelete: 'cascade' }),
    stepId: text('step_id').notNull(),
    /** Position in the definition (display order). */
    position: integer('position').notNull(),
    status: text('status').$type<StepStatus>().notNull(),
    attempts: integer('attempts').notNull().default(0),
    /** Times the step's worker died under it: counted apart from attempts, bounded against poison steps. */
    crashes: integer('crashes').notNull().default(0),
    /** A loop's progress: items whose sub-steps all completed (memoised in workflow_loop_items). */
    completedItems: integer('completed_items'),
    totalItems: integer('total_items'),
    /** When a ready step may be claimed (retry back-off). */
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }),
    /** A running step whose lease has passed belongs to a dead worker and is claimed again. */
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    workerId: text('worker_id'),
    output: jsonb('output').$type<unknown>(),
    lastError: text('last_error'),
    creditsUsed: doublePrecision('credits_used').notNull().default(0),
    startedAt: timestamp('started_at', { withTimezone: true }),
    completedAt: timestamp('completed_at', { withTimezone: true }),
  },
  (t) => [
    primaryKey({ columns: [t.runId, t.stepId] }),
    index('workflow_steps_claim_idx')
      .on(t.status, t.nextAttemptAt)
      .where(sql`status in ('ready', 'running')`),
  ],
);

/**
 * A loop item's completed sub-step, memoised like a top-level step: a loop claimed again after a crash
 * skips what is here, so only the items in flight run again (docs/workflows.md).
 */
export const workflowLoopItems = pgTable(
  'workflow_loop_items',
  {
    runId: uuid('run_id')
      .notNull()
      .references(() => workflowRuns.id, { onDelete: 'cascade' }),
    stepId: text('step_id').notNull(),
    itemIndex: integer('item_index').notNull(),
    subStepId: text('sub_step_id').notNull(),
    output: jsonb('output').$type<unknown>(),
    attempts: integer('attempts').notNull(),
    creditsUsed: doublePrecision('credits_used').notNull().default(0),
    completedAt: timestamp('completed_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.stepId, t.itemIndex, t.subStepId] })],
);

/**
 * One claim of a step by a worker: what it was given (templates filled) and how it ended, so the run page
 * shows every attempt with its own error. `n` counts claims; `attempt` is the retry attempt it served (a
 * claim after a crash serves the same attempt again).
 */
export const workflowStepAttempts = pgTable(
  'workflow_step_attempts',
  {
    runId: uuid('run_id')
      .notNull()
      .references(() => workflowRuns.id, { onDelete: 'cascade' }),
    stepId: text('step_id').notNull(),
    n: integer('n').notNull(),
    attempt: integer('attempt').notNull(),
    /** running, completed, failed, retrying, or interrupted (its worker stopped or died). */
    outcome: text('outcome')
      .$type<'running' | 'completed' | 'failed' | 'retrying' | 'interrupted'>()
      .notNull(),
    /** The step's resolved input (capped; see steps/input.ts). */
    input: jsonb('input').$type<unknown>(),
    error: text('error'),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull(),
    endedAt: timestamp('ended_at', { withTimezone: true }),
  },
  (t) => [primaryKey({ columns: [t.runId, t.stepId, t.n] })],
);
