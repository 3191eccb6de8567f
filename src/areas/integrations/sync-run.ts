import crypto from 'node:crypto';
import { and, eq, inArray, isNull, lt, ne, or, sql } from 'drizzle-orm';
import { ApiError } from '../../core/errors.ts';
import { sendAppWebhook } from './connection-events.ts';
import type { IntegrationDeps } from './connection-tokens.ts';
import type { ListArgs, Page, ProviderCall } from './connectors/types.ts';
import { safeMessage } from './provider-client.ts';
import {
  integrationRecords as records,
  integrationSyncRuns as runs,
  type SyncModel,
  integrationSyncs as syncs,
} from './sync-tables.ts';
import { integrationConnections as conns } from './tables.ts';
import { type Ops, withOps } from './unified.ts';

// One sync run (decision 134): take the sync's lease, go on with its pass (or start one), read the
// provider's list page by page through the connector's unified mapper, write what is new or changed, and
// once the pass has seen the whole list mark what it did not see as deleted. After every page the pass's
// cursor is saved, so a run stopped by a crash or a provider failure is resumed there by the next run.

export const SYNC_PAGE_SIZE = 100;
/** A run holds its sync this long past its last page; a crashed run's lease runs out and the next resumes. */
const LEASE_MS = 5 * 60_000;

type Item = { id: string } & Record<string, unknown>;
type Lister<C extends 'crm' | 'storage'> = {
  category: C;
  list: (ops: Ops[C], call: ProviderCall, a: ListArgs) => Promise<Page<Item>>;
};

/** The unified list each model is synced from, and its category. Files: the root folder's. */
export const SYNC_LISTS: { [M in SyncModel]: Lister<'crm'> | Lister<'storage'> } = {
  contacts: { category: 'crm', list: (ops, call, a) => ops.listContacts(call, a) },
  companies: { category: 'crm', list: (ops, call, a) => ops.listCompanies(call, a) },
  deals: { category: 'crm', list: (ops, call, a) => ops.listDeals(call, a) },
  files: { category: 'storage', list: (ops, call, a) => ops.listFiles(call, a) },
};
export const SYNC_MODELS = Object.keys(SYNC_LISTS) as SyncModel[];

type SyncRow = typeof syncs.$inferSelect;
export type RunRow = typeof runs.$inferSelect;
type Counts = { pages: number; added: number; updated: number; deleted: number };

const later = (d: IntegrationDeps, ms: number) => new Date(d.clock.now().getTime() + ms);
const hashOf = (item: Item) => crypto.createHash('sha256').update(JSON.stringify(item)).digest('base64url');

/** Claims the sync for one run; null when another worker holds it or it is gone. */
async function claim(d: IntegrationDeps, syncId: string): Promise<SyncRow | null> {
  const now = d.clock.now();
  const [row] = await d.db.orm
    .update(syncs)
    .set({ leaseUntil: later(d, LEASE_MS) })
    .where(and(eq(syncs.id, syncId), or(isNull(syncs.leaseUntil), lt(syncs.leaseUntil, now))))
    .returning();
  return row ?? null;
}

/** Writes one page: new and changed records with their modification time, the pass's mark on all of them. */
async function applyPage(
  d: IntegrationDeps,
  sync: SyncRow,
  passId: string,
  items: Item[],
): Promise<{ added: number; updated: number }> {
  const page = new Map(items.map((i) => [String(i.id), i]));
  if (!page.size) return { added: 0, updated: 0 };
  const now = d.clock.now();
  const scope = and(eq(records.connectionId, sync.connectionId), eq(records.model, sync.model));
  const before = await d.db.orm
    .select({ id: records.externalId, hash: records.hash, deletedAt: records.deletedAt })
    .from(records)
    .where(and(scope, inArray(records.externalId, [...page.keys()])));
  const known = new Map(before.map((r) => [r.id, r]));
  const writes: (typeof records.$inferInsert)[] = [];
  const unchanged: string[] = [];
  let added = 0;
  let updated = 0;
  for (const [id, item] of page) {
    const hash = hashOf(item);
    const prev = known.get(id);
    const action = !prev || prev.deletedAt ? 'added' : prev.hash !== hash ? 'updated' : null;
    if (!action) {
      unchanged.push(id);
      continue;
    }
    if (action === 'added') added++;
    else updated++;
    writes.push({
      connectionId: sync.connectionId,
      model: sync.model,
      externalId: id,
      data: item,
      hash,
      lastAction: action,
      firstSeenAt: now,
      modifiedAt: now,
      deletedAt: null,
      seenPass: passId,
    });
  }
  if (writes.length) {
    await d.db.orm
      .insert(records)
      .values(writes)
      .onConflictDoUpdate({
        target: [records.connectionId, records.model, records.externalId],
        set: {
          data: sql`excluded.data`,
          hash: sql`excluded.hash`,
          lastAction: sql`excluded.last_action`,
          modifiedAt: sql`excluded.modified_at`,
          deletedAt: null,
          seenPass: sql`excluded.seen_pass`,
        },
      });
  }
  if (unchanged.length) {
    await d.db.orm
      .update(records)
      .set({ seenPass: passId })
      .where(and(scope, inArray(records.externalId, unchanged)));
  }
  return { added, updated };
}

/** After a whole pass: what it did not see is gone at the provider. */
async function markDeletes(d: IntegrationDeps, sync: SyncRow, passId: string): Promise<number> {
  const now = d.clock.now();
  const gone = await d.db.orm
    .update(records)
    .set({ deletedAt: now, modifiedAt: now, lastAction: 'deleted' })
    .where(
      and(
        eq(records.connectionId, sync.connectionId),
        eq(records.model, sync.model),
        isNull(records.deletedAt),
        ne(records.seenPass, passId),
      ),
    )
    .returning({ id: records.externalId });
  return gone.length;
}

/**
 * Runs the sync once (the job `integrations.sync`, or a test). Answers the run, or null when another
 * worker is running this sync now. A provider failure ends the run `failed` with its code and message;
 * the pass's cursor stays for the next run.
 */
export async function runSync(d: IntegrationDeps, syncId: string): Promise<RunRow | null> {
  const sync = await claim(d, syncId);
  if (!sync) return null;
  const startedAt = d.clock.now();
  // A run a crash left `running` is over; this one goes on with its pass.
  await d.db.orm
    .update(runs)
    .set({
      status: 'failed',
      errorCode: 'INTERRUPTED',
      error: 'The run stopped before it finished; the next run resumed its pass.',
      finishedAt: startedAt,
    })
    .where(and(eq(runs.syncId, sync.id), eq(runs.status, 'running')));
  const resumed = sync.passId !== null;
  const passId = sync.passId ?? crypto.randomUUID();
  if (!resumed) await d.db.orm.update(syncs).set({ passId, passCursor: null }).where(eq(syncs.id, sync.id));
  const [run] = await d.db.orm
    .insert(runs)
    .values({ syncId: sync.id, status: 'running', resumed, startedAt })
    .returning();
  const counts: Counts = { pages: 0, added: 0, updated: 0, deleted: 0 };
  let failure: { code: string; message: string } | null = null;
  try {
    const scope = { orgId: sync.orgId, environment: sync.environment };
    const source = SYNC_LISTS[sync.model];
    const pass = async (
      list: (call: ProviderCall, a: ListArgs) => Promise<Page<Item>>,
      call: ProviderCall,
    ) => {
      let cursor = sync.passCursor ?? undefined;
      for (;;) {
        const page = await list(call, { cursor, limit: SYNC_PAGE_SIZE });
        const c = await applyPage(d, sync, passId, page.items);
        counts.pages++;
        counts.added += c.added;
        counts.updated += c.updated;
        await d.db.orm
          .update(syncs)
          .set({ passCursor: page.next, leaseUntil: later(d, LEASE_MS) })
          .where(eq(syncs.id, sync.id));
        await d.db.orm.update(runs).set(counts).where(eq(runs.id, run!.id));
        if (!page.next) break;
        cursor = page.next;
      }
    };
    if (source.category === 'crm')
      await withOps(d, scope, sync.connectionId, 'crm', (ops, call) =>
        pass((c, a) => source.list(ops, c, a), call),
      );
    else
      await withOps(d, scope, sync.connectionId, 'storage', (ops, call) =>
        pass((c, a) => source.list(ops, c, a), call),
      );
    counts.deleted = await markDeletes(d, sync, passId);
  } catch (err) {
    failure =
      err instanceof ApiError
        ? { code: err.code, message: err.message }
        : { code: 'SYNC_FAILED', message: safeMessage(null, (err as Error).message ?? String(err)) };
    d.log.warn({ syncId: sync.id, code: failure.code }, 'integrations: sync run failed');
  }
  const finishedAt = d.clock.now();
  const [done] = await d.db.orm
    .update(runs)
    .set({
      ...counts,
      status: failure ? 'failed' : 'succeeded',
      errorCode: failure?.code ?? null,
      error: failure?.message ?? null,
      finishedAt,
    })
    .where(eq(runs.id, run!.id))
    .returning();
  await d.db.orm
    .update(syncs)
    .set({
      ...(failure ? {} : { passId: null, passCursor: null }),
      leaseUntil: null,
      lastRunAt: finishedAt,
      nextRunAt: new Date(finishedAt.getTime() + sync.frequencyMinutes * 60_000),
      updatedAt: finishedAt,
    })
    .where(eq(syncs.id, sync.id));
  if (counts.added + counts.updated + counts.deleted > 0) await tellApp(d, sync, done!);
  return done!;
}

/** One `sync.records_changed` webhook per run that changed something, with its counts. */
async function tellApp(d: IntegrationDeps, sync: SyncRow, run: RunRow): Promise<void> {
  const [conn] = await d.db.orm
    .select({ slug: conns.connectorSlug, endUserId: conns.endUserId })
    .from(conns)
    .where(eq(conns.id, sync.connectionId));
  await sendAppWebhook(d, sync, 'sync.records_changed', {
    syncId: sync.id,
    runId: run.id,
    connectionId: sync.connectionId,
    connectorSlug: conn?.slug ?? null,
    endUserId: conn?.endUserId ?? null,
    model: sync.model,
    status: run.status,
    added: run.added,
    updated: run.updated,
    deleted: run.deleted,
    // Reading GET /v1/integrations/records with this modifiedAfter returns what this run changed.
    modifiedAfter: run.startedAt.toISOString(),
  });
}
