import { z } from 'zod';
import { defineJob } from '../../core/jobs.ts';
import type { Deps } from '../../deps.ts';
import { TRIGGERS_TICK_JOB, tickTriggers } from './triggers/tick.ts';
import { WAIT_DUE_JOB, WAIT_STORED_JOB } from './waits/begin.ts';
import { resolveWait, resumeFromStoredEvents } from './waits/resolve.ts';

// The area's jobs on the Postgres queue: a wait's due time (a sleep's end, a timeout), an event wait's
// look at the stored events, and the minute tick of cron schedules and stored events (docs/workflows.md, "Triggers" and "Waits").

type Ctx = { deps: Deps };

export const waitDueJob = defineJob({
  name: WAIT_DUE_JOB,
  schema: z.object({ waitId: z.string().uuid() }),
  retry: { limit: 5, delaySec: 2, backoff: true },
  concurrency: 2,
  expireInSeconds: 300,
  handle: async (data, { deps }: Ctx) => {
    // A wait that ended otherwise (event, approval, cancel) is no longer `waiting`: nothing happens.
    await resolveWait(deps, data.waitId, { kind: 'due' });
  },
  // A worker starting after a restart wakes at the next due time rather than at its fallback poll.
  dueTimes: async (deps: Deps) => {
    const { rows } = await deps.db.query<{ due_at: Date }>(
      `select w.due_at from workflow_waits w
         join workflow_step_states s on s.run_id = w.run_id and s.step_id = w.step_id
        where s.status = 'waiting' and w.due_at is not null order by w.due_at limit 100`,
    );
    return rows.map((r) => new Date(r.due_at));
  },
});

export const waitStoredJob = defineJob({
  name: WAIT_STORED_JOB,
  schema: z.object({ waitId: z.string().uuid() }),
  retry: { limit: 5, delaySec: 2, backoff: true },
  concurrency: 2,
  expireInSeconds: 300,
  handle: async (data, { deps }: Ctx) => {
    // A wait resumed meanwhile (by an event arriving, a timeout, a cancel) is left as it is.
    await resumeFromStoredEvents(deps, data.waitId);
  },
});

export const triggersTickJob = defineJob({
  name: TRIGGERS_TICK_JOB,
  cronOnly: true,
  schema: z.object({}),
  retry: { limit: 0, delaySec: 0 },
  concurrency: 1,
  expireInSeconds: 600,
  handle: async (_data, { deps }: Ctx) => {
    await tickTriggers(deps);
  },
});
