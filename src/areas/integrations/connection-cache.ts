import { performance } from 'node:perf_hooks';
import type { integrationConnections } from './tables.ts';

type IntegrationConnection = typeof integrationConnections.$inferSelect;

// The connection rows the unified operations and passthrough read on every call, kept for a few seconds per
// process (per database handle, so two test apps on one database behave as two nodes). Every write to a
// connection in this process drops its row; another node's write (a refresh, an expiry, a delete) is seen
// here within TTL_MS at most, and a stale access token meets a 401 that refreshes through the lease, which
// finds the other node's new tokens (docs/decisions/075-v1-rate-limit-in-memory.md).

const TTL_MS = 5_000;
const MAX_ROWS = 10_000;

type Cache = { rows: Map<string, { row: IntegrationConnection; at: number }>; generation: number };
const caches = new WeakMap<object, Cache>();

function cacheOf(db: object): Cache {
  let c = caches.get(db);
  if (!c) {
    c = { rows: new Map(), generation: 0 };
    caches.set(db, c);
  }
  return c;
}

export function cachedConnection(db: object, id: string): IntegrationConnection | undefined {
  const c = cacheOf(db);
  const hit = c.rows.get(id);
  if (!hit) return undefined;
  if (performance.now() - hit.at > TTL_MS) {
    c.rows.delete(id);
    return undefined;
  }
  return hit.row;
}

/** A token to pass to rememberConnection: a read that raced a write in this process is not kept. */
export function cacheGeneration(db: object): number {
  return cacheOf(db).generation;
}

export function rememberConnection(db: object, row: IntegrationConnection, generation: number): void {
  const c = cacheOf(db);
  if (c.generation !== generation) return;
  if (c.rows.size >= MAX_ROWS) c.rows.clear();
  c.rows.set(row.id, { row, at: performance.now() });
}

export function forgetConnection(db: object, id: string): void {
  const c = cacheOf(db);
  c.generation++;
  c.rows.delete(id);
}
