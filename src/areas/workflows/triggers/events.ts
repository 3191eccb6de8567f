import crypto from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import jsonata from 'jsonata';
import type { Deps } from '../../../deps.ts';
import { lockWorkflowIn } from '../admission.ts';
import { afterStart } from '../start.ts';
import { workflows } from '../tables.ts';
import { deliverToWaits, type EventIn } from '../waits/resolve.ts';
import type { WfScope } from '../workflows.ts';
import { type Fired, fireIn, inputOf, recordFire } from './fire.ts';

// POST /v1/workflows/events: an event of the caller's organization and environment is stored first
// (workflow_events), then delivered from that row: it starts every workflow subscribed to its name whose
// filter is truthy for it, and resumes every step waiting for it. A process dying in between leaves the row
// undelivered, and the minute tick delivers it again; a workflow the event already fired is not fired twice
// (one fire row per event and workflow, written with the run). An event no workflow subscribes to is
// accepted (nothing starts): senders need not know who listens.

export type EventBody = { name: string; payload: unknown };
type Scope = { orgId: string; environment: string };

/** An event left undelivered this long was dropped by a dead process; the tick delivers it. */
export const REDELIVER_AFTER_MS = 30_000;

export async function postEvent(deps: Deps, s: WfScope, body: EventBody) {
  const event: EventIn = {
    id: crypto.randomUUID(),
    name: body.name,
    payload: body.payload ?? null,
    receivedAt: deps.clock.now().toISOString(),
  };
  await deps.db.query(
    `insert into workflow_events (id, org_id, environment, name, payload, received_at)
     values ($1, $2, $3, $4, $5, $6)`,
    [event.id, s.orgId, s.environment, event.name, JSON.stringify(event.payload), event.receivedAt],
  );
  const { fired, resumedWaits } = await deliverEvent(deps, s, event);
  return {
    id: event.id,
    name: event.name,
    receivedAt: event.receivedAt,
    runs: fired
      .filter((x) => x.runId)
      .map((x) => ({ workflowId: x.workflowId, runId: x.runId!, status: x.outcome as 'started' | 'queued' })),
    skipped: fired
      .filter((x) => !x.runId)
      .map((x) => ({ workflowId: x.workflowId, outcome: x.outcome, reason: x.detail ?? '' })),
    resumedWaits,
  };
}

/** Delivers a stored event: the triggers it fires (each workflow once), then the waits it resumes. */
export async function deliverEvent(deps: Deps, s: Scope, event: EventIn) {
  const subscribed = await deps.db.orm
    .select()
    .from(workflows)
    .where(
      and(
        eq(workflows.orgId, s.orgId),
        eq(workflows.environment, s.environment),
        sql`${workflows.triggers}->'events' @> ${JSON.stringify([{ name: event.name }])}::jsonb`,
      ),
    );
  const data = { name: event.name, payload: event.payload };
  const fired: Fired[] = [];
  for (const wf of subscribed) {
    const f = { trigger: 'event' as const, ref: event.name, eventId: event.id };
    let sub: { input?: string | undefined } | null = null;
    let failure: string | null = null;
    for (const e of (wf.triggers.events ?? []).filter((x) => x.name === event.name)) {
      try {
        if (!e.filter || (await jsonata(e.filter).evaluate(data))) {
          sub = e;
          break;
        }
      } catch (err) {
        failure = `The filter failed: ${(err as Error).message}`;
      }
    }
    // Filtered out is the filter working, not worth a line of history; a filter that fails is.
    if (!sub && !failure) continue;
    let given: Record<string, unknown> | null = null;
    if (sub)
      try {
        given = await inputOf(sub.input, data, event.payload);
      } catch (err) {
        failure = `The event's input failed: ${(err as Error).message}`;
      }
    const r = await deps.db.transaction(async (tx) => {
      // Under the workflow's lock, so a redelivery racing the first delivery finds its fire row.
      await lockWorkflowIn(tx, wf.id);
      const { rows: done } = await tx.query(
        'select 1 from workflow_trigger_fires where event_id = $1 and workflow_id = $2',
        [event.id, wf.id],
      );
      if (done.length) return null;
      if (!given)
        return { fired: await recordFire(tx, deps, wf, f, 'invalid', null, failure), started: null };
      return fireIn(tx, deps, wf, {
        ...f,
        given,
        run: { type: 'event', ref: event.name, eventId: event.id },
        metadata: {},
      });
    });
    if (!r) continue;
    if (r.started) await afterStart(deps, r.started);
    fired.push(r.fired);
  }
  const resumedWaits = await deliverToWaits(deps, s, event);
  await deps.db.query('update workflow_events set triggers_done_at = $2 where id = $1', [
    event.id,
    deps.clock.now().toISOString(),
  ]);
  return { fired, resumedWaits };
}

/**
 * The minute tick's share: delivers events a dead process left undelivered, and drops events older than
 * WORKFLOW_EVENT_RETENTION_HOURS.
 */
export async function sweepEvents(deps: Deps): Promise<void> {
  const now = deps.clock.now().getTime();
  const { rows } = await deps.db.query<{
    id: string;
    org_id: string;
    environment: string;
    name: string;
    payload: unknown;
    received_at: Date | string;
  }>(
    `select id, org_id, environment, name, payload, received_at from workflow_events
      where triggers_done_at is null and received_at < $1 order by received_at limit 500`,
    [new Date(now - REDELIVER_AFTER_MS).toISOString()],
  );
  for (const e of rows)
    await deliverEvent(
      deps,
      { orgId: e.org_id, environment: e.environment },
      { id: e.id, name: e.name, payload: e.payload, receivedAt: new Date(e.received_at).toISOString() },
    );
  await deps.db.query('delete from workflow_events where received_at < $1', [
    new Date(now - deps.config.workflows.eventRetentionMs).toISOString(),
  ]);
}
