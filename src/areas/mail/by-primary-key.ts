import type { Queryable } from '../../core/db/client.ts';
import type { Deps } from '../../deps.ts';

/**
 * Runs a batch statement on the primary key. PGlite has no autovacuum, so tables are never analyzed and
 * the planner, costing a small table, scans all of mail_emails (dead row versions included) for every
 * batch: the claim got slower with every mail ever sent. PostgreSQL's statistics need no help.
 */
export async function byPrimaryKey<T>(deps: Deps, run: (q: Queryable) => Promise<T>): Promise<T> {
  if (deps.db.kind !== 'pglite') return run(deps.db);
  return deps.db.transaction(async (tx) => {
    await tx.query('SET LOCAL enable_seqscan = off');
    return run(tx);
  });
}
