import { and, asc, count, desc, eq, inArray, isNull } from 'drizzle-orm';
import { z } from 'zod';
import { isUniqueViolation } from '../../core/db/pg-errors.ts';
import { isUuid } from '../../core/ids.ts';
import { decodeCursor, encodeCursor } from '../../core/pagination.ts';
import type { IntegrationDeps, Scope } from './connection-tokens.ts';
import { findConnection } from './connections.ts';
import { connectorBySlug } from './connectors/index.ts';
import { integrationsErrors } from './errors.ts';
import { type RunRow, SYNC_LISTS } from './sync-run.ts';
import type { SyncModel } from './sync-tables.ts';
import {
  integrationRecords as records,
  integrationSyncRuns as runs,
  integrationSyncs as syncs,
} from './sync-tables.ts';

// Syncs as the API and the dashboard see them: create one per connection and model, list, change its
// frequency or pause it, delete it (its records go with it), its runs, and the synced records read with a
// modifiedAfter cursor (decision 134). Another organization's sync or connection is a 404.

export const SYNC_JOB = 'integrations.sync';
type SyncRow = typeof syncs.$inferSelect;

const iso = (d: Date | null) => d?.toISOString() ?? null;

export const runView = (r: RunRow) => ({
  id: r.id,
  status: r.status,
  resumed: r.resumed,
  pages: r.pages,
  added: r.added,
  updated: r.updated,
  deleted: r.deleted,
  errorCode: r.errorCode,
  error: r.error,
  startedAt: r.startedAt.toISOString(),
  finishedAt: iso(r.finishedAt),
});

async function views(d: IntegrationDeps, rows: SyncRow[]) {
  if (!rows.length) return [];
  const ids = rows.map((r) => r.id);
  const last = await d.db.orm
    .selectDistinctOn([runs.syncId])
    .from(runs)
    .where(inArray(runs.syncId, ids))
    .orderBy(runs.syncId, desc(runs.startedAt));
  const held = await d.db.orm
    .select({ connectionId: records.connectionId, model: records.model, n: count() })
    .from(records)
    .where(
      and(
        inArray(records.connectionId, [...new Set(rows.map((r) => r.connectionId))]),
        isNull(records.deletedAt),
      ),
    )
    .groupBy(records.connectionId, records.model);
  return rows.map((r) => {
    const run = last.find((x) => x.syncId === r.id);
    return {
      id: r.id,
      connectionId: r.connectionId,
      model: r.model,
      frequencyMinutes: r.frequencyMinutes,
      paused: r.paused,
      nextRunAt: r.nextRunAt.toISOString(),
      lastRunAt: iso(r.lastRunAt),
      records: Number(held.find((h) => h.connectionId === r.connectionId && h.model === r.model)?.n ?? 0),
      lastRun: run ? runView(run) : null,
      createdAt: r.createdAt.toISOString(),
    };
  });
}

const inScope = (s: Scope) => and(eq(syncs.orgId, s.orgId), eq(syncs.environment, s.environment));

async function findSync(d: IntegrationDeps, s: Scope, id: string): Promise<SyncRow> {
  if (!isUuid(id)) throw integrationsErrors.syncNotFound();
  const [r] = await d.db.orm
    .select()
    .from(syncs)
    .where(and(eq(syncs.id, id), inScope(s)));
  if (!r) throw integrationsErrors.syncNotFound();
  return r;
}

export async function createSync(
  d: IntegrationDeps,
  s: Scope,
  input: { connectionId: string; model: SyncModel; frequencyMinutes: number },
) {
  const conn = await findConnection(d, s, input.connectionId);
  const category = SYNC_LISTS[input.model].category;
  if (!connectorBySlug(conn.connectorSlug)?.[category])
    throw integrationsErrors.operationNotSupported(conn.connectorSlug, category);
  const now = d.clock.now();
  try {
    const [r] = await d.db.orm
      .insert(syncs)
      .values({
        orgId: s.orgId,
        environment: s.environment,
        connectionId: conn.id,
        model: input.model,
        frequencyMinutes: input.frequencyMinutes,
        nextRunAt: now,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    return (await views(d, [r!]))[0]!;
  } catch (err) {
    if (isUniqueViolation(err)) throw integrationsErrors.syncExists(input.model);
    throw err;
  }
}

export async function listSyncs(d: IntegrationDeps, s: Scope, q: { connectionId?: string }) {
  if (q.connectionId) await findConnection(d, s, q.connectionId);
  const rows = await d.db.orm
    .select()
    .from(syncs)
    .where(and(inScope(s), q.connectionId ? eq(syncs.connectionId, q.connectionId) : undefined))
    .orderBy(asc(syncs.createdAt))
    .limit(500);
  return { data: await views(d, rows) };
}

export async function getSync(d: IntegrationDeps, s: Scope, id: string) {
  return (await views(d, [await findSync(d, s, id)]))[0]!;
}

export async function updateSync(
  d: IntegrationDeps,
  s: Scope,
  id: string,
  input: { frequencyMinutes?: number; paused?: boolean },
) {
  const cur = await findSync(d, s, id);
  const now = d.clock.now();
  const frequencyMinutes = input.frequencyMinutes ?? cur.frequencyMinutes;
  const [r] = await d.db.orm
    .update(syncs)
    .set({
      frequencyMinutes,
      paused: input.paused ?? cur.paused,
      // A new frequency counts from the last run (or from now when it never ran).
      nextRunAt: new Date((cur.lastRunAt ?? now).getTime() + frequencyMinutes * 60_000),
      updatedAt: now,
    })
    .where(eq(syncs.id, cur.id))
    .returning();
  return (await views(d, [r!]))[0]!;
}

export async function deleteSync(d: IntegrationDeps, s: Scope, id: string) {
  const cur = await findSync(d, s, id);
  await d.db.orm.transaction(async (tx) => {
    await tx
      .delete(records)
      .where(and(eq(records.connectionId, cur.connectionId), eq(records.model, cur.model)));
    await tx.delete(syncs).where(eq(syncs.id, cur.id));
  });
  return { success: true as const };
}

export async function listRuns(d: IntegrationDeps, s: Scope, id: string) {
  const cur = await findSync(d, s, id);
  const rows = await d.db.orm
    .select()
    .from(runs)
    .where(eq(runs.syncId, cur.id))
    .orderBy(desc(runs.startedAt))
    .limit(50);
  return { data: rows.map(runView) };
}

/** Queues a run now (one at a time per sync: a run already queued is not queued twice). */
export async function triggerSync(d: IntegrationDeps, s: Scope, id: string) {
  const cur = await findSync(d, s, id);
  const job = await d.jobs.enqueue(SYNC_JOB, { syncId: cur.id }, { singletonKey: `sync:${cur.id}` });
  return { queued: job !== null };
}

const keyset = z.object({ at: z.iso.datetime(), id: z.string() });
type RecordRow = {
  external_id: string;
  last_action: 'added' | 'updated' | 'deleted';
  first_seen_at: Date | string;
  modified_at: Date | string;
  deleted_at: Date | string | null;
  data: string;
};

/** The synced records of a connection and model, oldest change first, from `modifiedAfter` on. */
export async function listRecords(
  d: IntegrationDeps,
  s: Scope,
  q: {
    connectionId: string;
    model: SyncModel;
    modifiedAfter?: string;
    includeDeleted: 'true' | 'false';
    cursor?: string;
    limit: number;
  },
) {
  // The app's read path: a connection row read in this process a few seconds ago will do.
  const conn = await findConnection(d, s, q.connectionId, { cached: true });
  // The filters are part of the cursor's scope: a cursor of one read is refused by another.
  const scope = `integrations:records:${conn.id}:${q.model}:${q.modifiedAfter ?? ''}:${q.includeDeleted}`;
  const after = q.cursor ? decodeCursor(d.keyring, scope, q.cursor, keyset) : undefined;
  // One plain query, the record as text parsed once here: through the ORM's jsonb mapping a page of 100
  // took about twice as long on PGlite (docs/benchmarks.md, "synced contacts").
  const params: unknown[] = [conn.id, q.model];
  const where = ['connection_id = $1', 'model = $2'];
  if (q.modifiedAfter) where.push(`modified_at >= $${params.push(new Date(q.modifiedAfter))}`);
  if (q.includeDeleted !== 'true') where.push('deleted_at IS NULL');
  if (after) {
    const at = params.push(new Date(after.at));
    where.push(`(modified_at, external_id) > ($${at}, $${params.push(after.id)})`);
  }
  const { rows } = await d.db.query<RecordRow>(
    `SELECT external_id, last_action, first_seen_at, modified_at, deleted_at, data::text AS data
       FROM integration_records WHERE ${where.join(' AND ')}
      ORDER BY modified_at, external_id LIMIT $${params.push(q.limit + 1)}`,
    params,
  );
  const page = rows.slice(0, q.limit);
  const last = page.at(-1);
  return {
    data: page.map((r) => ({
      id: r.external_id,
      lastAction: r.last_action,
      firstSeenAt: new Date(r.first_seen_at).toISOString(),
      modifiedAt: new Date(r.modified_at).toISOString(),
      deletedAt: r.deleted_at ? new Date(r.deleted_at).toISOString() : null,
      record: JSON.parse(r.data) as Record<string, unknown>,
    })),
    nextCursor:
      rows.length > q.limit && last
        ? encodeCursor(d.keyring, scope, {
            at: new Date(last.modified_at).toISOString(),
            id: last.external_id,
          })
        : null,
  };
}
