import pg from 'pg';
import type { Db } from './client.ts';

export type Unlisten = () => Promise<void>;

export type ListenEvents = {
  /**
   * The listening connection died: messages may be missed until onRestored. Called once per outage, at once,
   * so a cache that relies on the messages can stop serving (fail closed) before anything is missed.
   */
  onLost?: () => void;
  /** Listening again after an outage; whatever was sent meanwhile is lost, so caches start over. */
  onRestored?: () => void;
};

/** Reconnection delays after a lost LISTEN connection; the last one repeats. Jittered by up to 25%. */
export const LISTEN_BACKOFF_MS = [100, 250, 500, 1000, 2000, 5000];

/**
 * Postgres LISTEN/NOTIFY across every process sharing the database (cache invalidation). On PGlite the
 * one process is the only listener; on PostgreSQL a dedicated connection listens, and when it dies (a
 * restart, a failover, pg_terminate_backend, a network cut) it reconnects with back-off until unlisten.
 * The first connection is made before this resolves: a database that cannot be reached fails start-up.
 */
export async function listen(
  db: Db,
  databaseUrl: string | undefined,
  channel: string,
  onMessage: (payload: string) => void,
  events: ListenEvents = {},
): Promise<Unlisten> {
  if (db.pglite) return db.pglite.listen(channel, onMessage);
  let closing = false;
  let current: pg.Client | null = null;
  let retry: NodeJS.Timeout | null = null;
  let failures = 0;

  const scheduleReconnect = () => {
    if (closing || retry) return;
    const base = LISTEN_BACKOFF_MS[Math.min(failures, LISTEN_BACKOFF_MS.length - 1)]!;
    failures++;
    retry = setTimeout(
      () => {
        retry = null;
        connect(false).catch(() => scheduleReconnect());
      },
      Math.round(base * (1 + Math.random() * 0.25)),
    );
    retry.unref();
  };

  const connect = async (first: boolean): Promise<void> => {
    const client = new pg.Client({ connectionString: databaseUrl });
    let live = false;
    const lost = () => {
      if (!live) return;
      live = false;
      if (current === client) current = null;
      client.end().catch(() => {});
      if (closing) return;
      events.onLost?.();
      scheduleReconnect();
    };
    // Always handled: an 'error' event without a listener would crash the process.
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (n) => {
      if (n.channel === channel) onMessage(n.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch (err) {
      client.end().catch(() => {});
      throw err;
    }
    if (closing) {
      await client.end().catch(() => {});
      return;
    }
    live = true;
    current = client;
    failures = 0;
    if (!first) events.onRestored?.();
  };

  await connect(true);
  return async () => {
    closing = true;
    if (retry) clearTimeout(retry);
    retry = null;
    await current?.end().catch(() => {});
    current = null;
  };
}

export async function notify(db: Db, channel: string, payload: string): Promise<void> {
  await db.query('SELECT pg_notify($1, $2)', [channel, payload]);
}
