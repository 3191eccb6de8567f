import { z } from 'zod';
import { defineJob } from '../../core/jobs.ts';
import type { Deps } from '../../deps.ts';
import { dueForRefresh, refreshConnection } from './connection-tokens.ts';

// Tokens are refreshed when due (connection-tokens.ts refreshDueAt: 75 % of the lifetime or 5 minutes
// before the end, whichever is later): every minute the connections due are refreshed, one at a time per
// connection across workers through the row's lease, transient failures backing off; a call that meets a
// 401 refreshes on demand as well (provider-client.ts).

export const INTEGRATIONS_REFRESH_JOB = 'integrations.refresh-tokens';
export const INTEGRATIONS_REFRESH_CRON = '* * * * *';

/** Refreshes every connection due; returns how many were refreshed and how many failed. */
export async function refreshDue(deps: Deps): Promise<{ refreshed: number; failed: number }> {
  let refreshed = 0;
  let failed = 0;
  for (const id of await dueForRefresh(deps)) {
    try {
      await refreshConnection(deps, id);
      refreshed++;
    } catch (err) {
      failed++;
      deps.log.warn(
        { connectionId: id, code: (err as { code?: string }).code },
        'integrations: token refresh failed',
      );
    }
  }
  return { refreshed, failed };
}

export const integrationsRefreshJob = defineJob({
  name: INTEGRATIONS_REFRESH_JOB,
  schema: z.object({}),
  handle: async (_data, { deps }: { deps: Deps }) => {
    await refreshDue(deps);
  },
});
