import { desc, eq } from 'drizzle-orm';
import { integrationCallLogs as logs } from './call-log-tables.ts';
import { flushCallLogs } from './call-log-writer.ts';
import type { IntegrationDeps, Scope } from './connection-tokens.ts';
import { findConnection } from './connections.ts';

// Reading a connection's call log (written by call-log-writer.ts).

export { KEEP_PER_CONNECTION } from './call-log-writer.ts';

export type CallLogView = {
  id: string;
  method: string;
  host: string;
  path: string;
  status: number | null;
  durationMs: number;
  error: string | null;
  createdAt: string;
};

/** A connection's logged provider calls, newest first (another tenant's connection is a 404). */
export async function listCallLogs(
  d: IntegrationDeps,
  s: Scope,
  connectionId: string,
  limit: number,
): Promise<{ data: CallLogView[] }> {
  const row = await findConnection(d, s, connectionId);
  await flushCallLogs(d);
  const rows = await d.db.orm
    .select()
    .from(logs)
    .where(eq(logs.connectionId, row.id))
    .orderBy(desc(logs.id))
    .limit(limit);
  return {
    data: rows.map((r) => ({
      id: String(r.id),
      method: r.method,
      host: r.host,
      path: r.path,
      status: r.status,
      durationMs: r.durationMs,
      error: r.error,
      createdAt: r.createdAt.toISOString(),
    })),
  };
}
