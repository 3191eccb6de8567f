import crypto from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import jsonata from 'jsonata';
import type { Deps } from '../../../deps.ts';
import { workflows } from '../tables.ts';
import { deliverToWaits } from '../waits/resolve.ts';
import type { WfScope } from '../workflows.ts';
import { type Fired, fire, inputOf, recordFire } from './fire.ts';

// POST /v1/workflows/events: an event of the caller's organization and environment starts every workflow
// subscribed to its name whose filter is truthy for it, and resumes every step waiting for it. An event no
// workflow subscribes to is accepted (nothing starts): senders need not know who listens.

export type EventBody = { name: string; payload: unknown };

export async function postEvent(deps: Deps, s: WfScope, body: EventBody) {
  const event = {
    id: crypto.randomUUID(),
    name: body.name,
    payload: body.payload ?? null,
    receivedAt: deps.clock.now().toISOString(),
  };
  const subscribed = await deps.db.orm
    .select()
    .from(workflows)
    .where(
      and(
        eq(workflows.orgId, s.orgId),
        eq(workflows.environment, s.environment),
        sql`${workflows.triggers}->'events' @> ${JSON.stringify([{ name: body.name }])}::jsonb`,
      ),
    );
  const data = { name: event.name, payload: event.payload };
  const fired: Fired[] = [];
  for (const wf of subscribed) {
    const f = { trigger: 'event' as const, ref: event.name };
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
    if (!sub) {
      // Filtered out is the filter working, not worth a line of history; a filter that fails is.
      if (failure) fired.push(await recordFire(deps, wf, f, 'invalid', null, failure));
      continue;
    }
    let given: Record<string, unknown>;
    try {
      given = await inputOf(sub.input, data, event.payload);
    } catch (err) {
      fired.push(
        await recordFire(deps, wf, f, 'invalid', null, `The event's input failed: ${(err as Error).message}`),
      );
      continue;
    }
    fired.push(
      await fire(deps, wf, {
        ...f,
        given,
        run: { type: 'event', ref: event.name, eventId: event.id },
        metadata: {},
      }),
    );
  }
  const resumedWaits = await deliverToWaits(deps, s, event);
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
