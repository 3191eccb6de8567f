import type { Deps } from '../../../deps.ts';
import { sweepEvents } from './events.ts';
import { tickSchedules } from './schedules.ts';

// The minute tick of workers (`workflows.triggers.tick`): schedules' slots and held runs (schedules.ts),
// then stored events a dead process left undelivered, and events past their retention (events.ts).

export const TRIGGERS_TICK_JOB = 'workflows.triggers.tick';
export const TRIGGERS_TICK_CRON = '* * * * *';

export async function tickTriggers(deps: Deps): Promise<void> {
  await tickSchedules(deps);
  await sweepEvents(deps);
}
