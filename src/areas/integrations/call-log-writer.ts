import { integrationCallLogs as logs } from './call-log-tables.ts';
import type { IntegrationDeps } from './connection-tokens.ts';

// Per-connection logs of provider calls: method, host, path (credentials redacted), status, duration. Every
// attempt is one entry (a retried 5xx shows twice). Entries are buffered per database handle and written in
// batches (a provider call never waits for a log insert); a read flushes first. Each connection keeps its
// newest KEEP_PER_CONNECTION entries.

export const KEEP_PER_CONNECTION = 200;
const FLUSH_MS = 250;
const FLUSH_AT = 200;

export type CallLogEntry = {
  connectionId: string;
  method: string;
  url: URL;
  status: number | null;
  durationMs: number;
  error: string | null;
  /** Values to cut out wherever they appear (the connection's tokens or key). */
  secrets: string[];
  /** The query parameter the provider takes the key in, if any. */
  keyParam?: string;
};

type Row = typeof logs.$inferInsert;
type Buffer = { rows: Row[]; timer: NodeJS.Timeout | null; flushing: Promise<void> | null };
const buffers = new WeakMap<object, Buffer>();

// Query keys whose values are credentials whatever the provider (OAuth codes, keys, signatures).
const SECRET_KEY = /token|key|secret|password|passwd|signature|sig$|auth|code|session|credential/i;

/** A URL's path and query as logged: credential-looking values and the connection's secrets redacted. */
export function redactedPath(url: URL, secrets: string[], keyParam?: string): string {
  const q = new URLSearchParams();
  for (const [k, v] of url.searchParams) q.append(k, k === keyParam || SECRET_KEY.test(k) ? '[redacted]' : v);
  let out = url.pathname + (q.size ? `?${q.toString().replaceAll('%5Bredacted%5D', '[redacted]')}` : '');
  for (const s of secrets) {
    if (!s || s.length < 6) continue;
    out = out.split(s).join('[redacted]').split(encodeURIComponent(s)).join('[redacted]');
  }
  return out.length > 1000 ? `${out.slice(0, 997)}...` : out;
}

export function recordCall(d: IntegrationDeps, e: CallLogEntry): void {
  let b = buffers.get(d.db);
  if (!b) {
    b = { rows: [], timer: null, flushing: null };
    buffers.set(d.db, b);
  }
  b.rows.push({
    connectionId: e.connectionId,
    method: e.method,
    host: e.url.host,
    path: redactedPath(e.url, e.secrets, e.keyParam),
    status: e.status,
    durationMs: Math.round(e.durationMs),
    error: e.error,
    createdAt: d.clock.now(),
  });
  if (b.rows.length >= FLUSH_AT) void flushCallLogs(d);
  else if (!b.timer) {
    b.timer = setTimeout(() => void flushCallLogs(d), FLUSH_MS);
    b.timer.unref();
  }
}

export async function flushCallLogs(d: IntegrationDeps): Promise<void> {
  const b = buffers.get(d.db);
  if (!b) return;
  if (b.timer) clearTimeout(b.timer);
  b.timer = null;
  await b.flushing;
  const rows = b.rows.splice(0);
  if (!rows.length) return;
  b.flushing = write(d, rows).finally(() => {
    b.flushing = null;
  });
  await b.flushing;
}

async function write(d: IntegrationDeps, rows: Row[]): Promise<void> {
  try {
    await d.db.orm.insert(logs).values(rows);
  } catch {
    // A connection deleted meanwhile fails the batch on its foreign key: the others are written alone.
    for (const r of rows)
      await d.db.orm
        .insert(logs)
        .values(r)
        .catch(() => {});
  }
  for (const id of new Set(rows.map((r) => r.connectionId))) {
    await d.db
      .query(
        `DELETE FROM integration_call_logs WHERE connection_id = $1 AND id NOT IN (
           SELECT id FROM integration_call_logs WHERE connection_id = $1 ORDER BY id DESC LIMIT $2)`,
        [id, KEEP_PER_CONNECTION],
      )
      .catch((err) => d.log.warn({ err }, 'integrations: call log pruning failed'));
  }
}
