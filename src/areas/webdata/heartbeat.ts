import { and, eq } from 'drizzle-orm';
import type { Deps } from '../../deps.ts';
import type { webdataBatches, webdataCrawls } from './tables.ts';

// The stamp a running batch or crawl carries so that the sweeper (sweep.ts) can tell a live one from one
// whose worker stopped.

export const HEARTBEAT_MS = 30_000;

/** The stamp of work a worker let go of on purpose (a graceful stop): stale at once. */
export const RELEASED = new Date(0);

type Stamped = typeof webdataBatches | typeof webdataCrawls;

/** Stamps the row every HEARTBEAT_MS until the returned stop is called (the claim stamps it first). */
export function keepAlive(deps: Deps, table: Stamped, id: string): () => void {
  const beat = () =>
    deps.db.orm
      .update(table)
      .set({ heartbeatAt: deps.clock.now() })
      .where(eq(table.id, id))
      .catch((err: unknown) => deps.log.warn({ err, id }, 'web data heartbeat failed'));
  const timer = setInterval(beat, HEARTBEAT_MS);
  timer.unref();
  return () => clearInterval(timer);
}

export async function releaseStamp(deps: Deps, table: Stamped, id: string): Promise<void> {
  await deps.db.orm
    .update(table)
    .set({ heartbeatAt: RELEASED })
    .where(and(eq(table.id, id), eq(table.status, 'processing')));
}
