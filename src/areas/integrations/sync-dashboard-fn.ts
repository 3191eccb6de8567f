import { inArray } from 'drizzle-orm';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { orgForUser, slugInput } from '../orgs/index.ts';
import * as Y from './sync-schema.ts';
import { listRuns, listSyncs } from './syncs.ts';
import { integrationConnections as conns } from './tables.ts';

// The dashboard's view of syncs (any member): every sync of an environment with its connection, records
// held and last run, and one sync's runs with their counts and errors. Set-up is the API's
// (docs/integrations.md, "Syncs").

const scoped = { orgSlug: slugInput, environment: z.enum(['production', 'sandbox']).default('production') };

async function scopeOf(
  deps: Deps,
  userId: string,
  input: { orgSlug: string; environment: 'production' | 'sandbox' },
) {
  const { org } = await orgForUser(deps, userId, input.orgSlug);
  return { orgId: org.id, environment: input.environment };
}

const syncRow = Y.sync.extend({ connectorSlug: z.string(), endUserId: z.string() });

export const listIntegrationSyncsForDashboard = defineFn({
  name: 'listIntegrationSyncsForDashboard',
  summary: "An environment's integration syncs: connection, model, records held, last run (any member).",
  auth: { kind: 'user' },
  input: z.strictObject(scoped),
  output: z.object({ data: z.array(syncRow) }),
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const scope = await scopeOf(deps, caller.userId, input);
    const { data } = await listSyncs(deps, scope, {});
    const ids = [...new Set(data.map((s) => s.connectionId))];
    const rows = ids.length
      ? await deps.db.orm
          .select({ id: conns.id, slug: conns.connectorSlug, endUserId: conns.endUserId })
          .from(conns)
          .where(inArray(conns.id, ids))
      : [];
    return {
      data: data.map((s) => {
        const c = rows.find((r) => r.id === s.connectionId);
        return { ...s, connectorSlug: c?.slug ?? '', endUserId: c?.endUserId ?? '' };
      }),
    };
  },
});

export const listIntegrationSyncRunsForDashboard = defineFn({
  name: 'listIntegrationSyncRunsForDashboard',
  summary: "A sync's last 50 runs: status, pages, added, updated, deleted and the error (any member).",
  auth: { kind: 'user' },
  input: z.strictObject({ ...scoped, syncId: z.string().trim().min(1).max(100) }),
  output: Y.syncRunList,
  errors: ['ORG_NOT_FOUND', 'SYNC_NOT_FOUND'],
  handler: async ({ deps, caller }, input) =>
    listRuns(deps, await scopeOf(deps, caller.userId, input), input.syncId),
});

export const syncDashboardFns = [listIntegrationSyncsForDashboard, listIntegrationSyncRunsForDashboard];
