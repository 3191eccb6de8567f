import { sql } from 'drizzle-orm';
import { boolean, index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { workflowRuns, workflows } from './tables.ts';

// What starts runs besides an API call (schedules, events, the inbound webhook), what each start did, and
// the waits of running runs (docs/workflows.md, "Triggers" and "Waits"). Every row carries its organization
// and environment like the area's other tables.

/** One cron schedule of a workflow, kept in step with its `triggers.schedules` on create and update. */
export const workflowSchedules = pgTable(
  'workflow_schedules',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').notNull(),
    workflowId: uuid('workflow_id')
      .notNull()
      .references(() => workflows.id, { onDelete: 'cascade' }),
    /** `<cron>@<timezone>`: what the schedule's fires and runs are filed under. */
    ref: text('ref').notNull(),
    cron: text('cron').notNull(),
    timezone: text('timezone').notNull(),
    overlap: text('overlap').$type<'skip' | 'allow' | 'queue'>().notNull(),
    catchUp: boolean('catch_up').notNull(),
    variables: jsonb('variables').$type<Record<string, unknown>>().notNull(),
    /** Slots at or before this never fire (the schedule did not exist yet). */
    since: timestamp('since', { withTimezone: true }).notNull(),
    /** The latest slot claimed: the worker whose update moves it forward fires that slot, once. */
    lastSlot: timestamp('last_slot', { withTimezone: true }),
  },
  (t) => [uniqueIndex('workflow_schedules_ref_idx').on(t.workflowId, t.ref)],
);

export const FIRE_OUTCOMES = ['started', 'queued', 'skipped', 'rate_limited', 'invalid', 'missed'] as const;
export type FireOutcome = (typeof FIRE_OUTCOMES)[number];

/** Each time a trigger fired (a slot, an event, a webhook call) and what came of it. */
export const workflowTriggerFires = pgTable(
  'workflow_trigger_fires',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').notNull(),
    workflowId: uuid('workflow_id').notNull(),
    trigger: text('trigger').$type<'schedule' | 'event' | 'webhook'>().notNull(),
    ref: text('ref').notNull(),
    slot: timestamp('slot', { withTimezone: true }),
    outcome: text('outcome').$type<FireOutcome>().notNull(),
    runId: uuid('run_id'),
    detail: text('detail'),
    /** The stored event that fired it: an event starts a workflow once, however often it is delivered. */
    eventId: uuid('event_id'),
    firedAt: timestamp('fired_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    index('workflow_trigger_fires_wf_idx').on(t.workflowId, t.trigger, t.ref, t.firedAt),
    uniqueIndex('workflow_trigger_fires_event_idx')
      .on(t.eventId, t.workflowId)
      .where(sql`event_id is not null`),
  ],
);

/**
 * Every event received (`POST /v1/workflows/events`), kept for WORKFLOW_EVENT_RETENTION_HOURS: a wait that
 * begins after its event arrived still finds it, and triggers are delivered from this row, so a crash
 * between receipt and the runs' start is finished by the minute tick (`triggersDoneAt` still null).
 */
export const workflowEvents = pgTable(
  'workflow_events',
  {
    id: uuid('id').primaryKey(),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').notNull(),
    name: text('name').notNull(),
    payload: jsonb('payload').$type<unknown>(),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull(),
    triggersDoneAt: timestamp('triggers_done_at', { withTimezone: true }),
  },
  (t) => [
    index('workflow_events_name_idx').on(t.orgId, t.environment, t.name, t.receivedAt),
    index('workflow_events_pending_idx').on(t.receivedAt).where(sql`triggers_done_at is null`),
  ],
);

export const WAIT_KINDS = ['sleep', 'event', 'approval'] as const;
export type WaitKind = (typeof WAIT_KINDS)[number];

/**
 * A `wait` step that is waiting: no worker holds it. A sleep or a timeout is a job of the Postgres queue due
 * at `dueAt`; an event or an approval resolves it when it comes. A run retried from a failed wait gets a new
 * row (a new id), so an approval link of the old one is dead.
 */
export const workflowWaits = pgTable(
  'workflow_waits',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    runId: uuid('run_id')
      .notNull()
      .references(() => workflowRuns.id, { onDelete: 'cascade' }),
    stepId: text('step_id').notNull(),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').notNull(),
    kind: text('kind').$type<WaitKind>().notNull(),
    eventName: text('event_name'),
    match: text('match'),
    dueAt: timestamp('due_at', { withTimezone: true }),
    /** Why the wait cannot begin (a bad `until`): it fails when its job runs, at once. */
    error: text('error'),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    uniqueIndex('workflow_waits_step_idx').on(t.runId, t.stepId),
    index('workflow_waits_event_idx').on(t.orgId, t.environment, t.eventName).where(sql`kind = 'event'`),
  ],
);
