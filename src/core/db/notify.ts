import pg from 'pg';
import type { Db } from './client.ts';

export type Unlisten = () => Promise<void>;

/**
 * Postgres LISTEN/NOTIFY across every process sharing the database (cache invalidation). On PGlite the
 * one process is the only listener; on PostgreSQL a dedicated connection listens.
 */
export async function listen(
  db: Db,
  databaseUrl: string | undefined,
  channel: string,
  onMessage: (payload: string) => void,
  /** Called once if the listening connection dies: messages may be missed from then on. */
  onLost: () => void = () => {},
): Promise<Unlisten> {
  if (db.pglite) return db.pglite.listen(channel, onMessage);
  const client = new pg.Client({ connectionString: databaseUrl });
  let closing = false;
  let lost = false;
  const lose = () => {
    if (closing || lost) return;
    lost = true;
    onLost();
  };
  client.on('error', lose);
  client.on('end', lose);
  await client.connect();
  client.on('notification', (n) => {
    if (n.channel === channel) onMessage(n.payload ?? '');
  });
  await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
  return async () => {
    closing = true;
    await client.end().catch(() => {});
  };
}

export async function notify(db: Db, channel: string, payload: string): Promise<void> {
  await db.query('SELECT pg_notify($1, $2)', [channel, payload]);
}
