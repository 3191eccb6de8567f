import type { Db } from './client.ts';

// PGlite runs no autovacuum and no auto-ANALYZE: without this pass every table that sees updates or deletes
// keeps its dead row versions forever and the planner never gets statistics (docs/decisions/026). PostgreSQL
// servers have their own autovacuum, so the pass does nothing there.
//
// Which tables need work is decided as autovacuum decides, from the same settings (PostgreSQL's defaults
// unless an operator changed them): vacuum when dead rows > 50 + 0.2 × reltuples, when rows inserted since
// the last vacuum > 1000 + 0.2 × reltuples, or when the table's oldest unfrozen transaction id is older
// than autovacuum_freeze_max_age (wraparound); analyze when rows changed since the last analyze
// > 50 + 0.1 × reltuples. PGlite keeps these counters in memory only: they are exact while the process
// lives (once flushed, see below) and start again from zero after every restart. Work left behind by an
// earlier run is found by size instead: a table now more than 20 % (and 8 pages) bigger than when it was
// last vacuumed or analyzed is vacuumed and analyzed.

export type MaintenanceStep = {
  /** Schema-qualified, quoted name. */
  table: string;
  vacuum: boolean;
  analyze: boolean;
  /** Why: 'dead', 'inserted', 'toast', 'wraparound', 'grown' (vacuum); 'modified' (analyze). */
  reasons: string[];
  /**
   * The table has a pgvector index (hnsw, ivfflat): its VACUUM skips index cleanup. Removing dead rows
   * from an HNSW graph repairs the graph around each one, in WASM on the event loop: 16.7 s for 1,000
   * dead rows of a 3,000-row table here, against 35 ms without (docs/decisions/026).
   */
  vectorIndex: boolean;
};

export type MaintenanceResult = {
  /** Steps run, in order, with how long each blocked the database. */
  done: (MaintenanceStep & { ms: number })[];
  /** Steps left for the next pass because the time budget ran out. */
  deferred: MaintenanceStep[];
  /** Steps whose statement failed (e.g. the table was dropped since the plan); the pass went on. */
  failed: (MaintenanceStep & { error: string })[];
};

/** Extra pages a table may gain beyond 20 % before the size rule vacuums it (64 KiB at 8 KiB pages). */
const GROWTH_MIN_PAGES = 8;

// Every ordinary table and materialized view, catalogs included (ANALYZE itself leaves dead rows in
// pg_statistic, and the database's frozen-xid horizon only advances when every table's does). TOAST tables
// are vacuumed with their table, partitioned parents through their partitions (autovacuum skips both too);
// temporary tables belong to their session.
const PLAN_SQL = `
WITH cfg AS (
  SELECT current_setting('autovacuum_vacuum_threshold')::float8 AS v_base,
         current_setting('autovacuum_vacuum_scale_factor')::float8 AS v_scale,
         current_setting('autovacuum_vacuum_insert_threshold')::float8 AS i_base,
         current_setting('autovacuum_vacuum_insert_scale_factor')::float8 AS i_scale,
         current_setting('autovacuum_analyze_threshold')::float8 AS a_base,
         current_setting('autovacuum_analyze_scale_factor')::float8 AS a_scale,
         current_setting('autovacuum_freeze_max_age')::float8 AS freeze_age,
         current_setting('autovacuum_multixact_freeze_max_age')::float8 AS mxid_freeze_age,
         current_setting('block_size')::int AS block_size
), t AS (
  SELECT format('%I.%I', n.nspname, c.relname) AS name,
    coalesce(s.n_dead_tup, 0) AS dead,
    cfg.v_base + cfg.v_scale * greatest(c.reltuples, 0) AS dead_limit,
    -- -1 (PostgreSQL's "disabled") turns the insert rule off, as it does for autovacuum.
    CASE WHEN cfg.i_base < 0 THEN 0 ELSE coalesce(s.n_ins_since_vacuum, 0) END AS inserted,
    cfg.i_base >= 0 AS inserted_on,
    cfg.i_base + cfg.i_scale * greatest(c.reltuples, 0) AS inserted_limit,
    coalesce(ts.n_dead_tup, 0) AS toast_dead,
    cfg.v_base + cfg.v_scale * greatest(tc.reltuples, 0) AS toast_limit,
    coalesce(s.n_mod_since_analyze, 0) AS modified,
    cfg.a_base + cfg.a_scale * greatest(c.reltuples, 0) AS modified_limit,
    age(c.relfrozenxid) > cfg.freeze_age OR mxid_age(c.relminmxid) > cfg.mxid_freeze_age
      OR coalesce(age(tc.relfrozenxid) > cfg.freeze_age, false) AS wraparound,
    pg_relation_size(c.oid) / cfg.block_size AS pages,
    EXISTS (
      SELECT 1 FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_am am ON am.oid = ic.relam
      WHERE i.indrelid = c.oid AND am.amname IN ('hnsw', 'ivfflat')
    ) AS vector_index,
    greatest(c.relpages, 0) * (1 + cfg.v_scale) + ${GROWTH_MIN_PAGES} AS pages_limit
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace
  CROSS JOIN cfg
  LEFT JOIN pg_stat_all_tables s ON s.relid = c.oid
  LEFT JOIN pg_class tc ON tc.oid = c.reltoastrelid
  LEFT JOIN pg_stat_all_tables ts ON ts.relid = c.reltoastrelid
  WHERE c.relkind IN ('r', 'm') AND c.relpersistence <> 't'
    AND NOT coalesce(c.reloptions @> ARRAY['autovacuum_enabled=false'], false)
), r AS (
  SELECT name, array_remove(ARRAY[
      CASE WHEN wraparound THEN 'wraparound' END,
      -- Without index cleanup the dead rows' line pointers stay and go on counting as dead rows, so on
      -- a table with a vector index only its growth (the rule below) tells that it needs another pass.
      CASE WHEN dead > dead_limit AND NOT vector_index THEN 'dead' END,
      CASE WHEN inserted_on AND inserted > inserted_limit THEN 'inserted' END,
      CASE WHEN toast_dead > toast_limit AND NOT vector_index THEN 'toast' END,
      CASE WHEN pages > pages_limit THEN 'grown' END,
      -- ANALYZE skips pg_statistic (autovacuum never asks), so its counter would ask on every pass.
      CASE WHEN modified > modified_limit AND name <> 'pg_catalog.pg_statistic' THEN 'modified' END
    ], NULL) AS reasons,
    -- Most overdue first, so a pass cut short by its budget has done what mattered most.
    greatest(dead / nullif(dead_limit, 0), inserted / nullif(inserted_limit, 0),
             toast_dead / nullif(toast_limit, 0), modified / nullif(modified_limit, 0),
             pages / nullif(pages_limit, 0)) AS urgency,
    wraparound, vector_index
  FROM t
)
SELECT name AS "table", reasons, vector_index AS "vectorIndex" FROM r
WHERE cardinality(reasons) > 0
ORDER BY wraparound DESC, urgency DESC NULLS LAST, name`;

/** The tables that need a VACUUM and/or an ANALYZE now, most overdue first (PGlite only). */
export async function maintenancePlan(db: Db): Promise<MaintenanceStep[]> {
  if (db.kind !== 'pglite') return [];
  // A backend sends its table counters to the statistics system at most once a second, when idle, and
  // PGlite never wakes up to send the rest: ask for them now, or the plan would lag behind the writes.
  await db.query('SELECT pg_stat_force_next_flush()');
  const { rows } = await db.query<{ table: string; reasons: string[]; vectorIndex: boolean }>(PLAN_SQL);
  return rows.map((r) => ({
    table: r.table,
    vacuum: r.reasons.some((x) => x !== 'modified'),
    analyze: r.reasons.includes('modified') || r.reasons.includes('grown'),
    reasons: r.reasons,
    vectorIndex: r.vectorIndex,
  }));
}

export function maintenanceStatement(step: MaintenanceStep): string {
  if (!step.vacuum) return `ANALYZE ${step.table}`;
  const options = [...(step.vectorIndex ? ['INDEX_CLEANUP OFF'] : []), ...(step.analyze ? ['ANALYZE'] : [])];
  return `VACUUM ${options.length ? `(${options.join(', ')}) ` : ''}${step.table}`;
}

/**
 * Vacuums and analyzes what maintenancePlan() finds, one table per statement. PGlite runs each statement on
 * the process's event loop and holds its only connection meanwhile, so other queries wait between tables,
 * not for the whole pass; once budgetMs has passed no further table is started (the next pass resumes).
 */
export async function runMaintenance(db: Db, opts: { budgetMs?: number } = {}): Promise<MaintenanceResult> {
  const budgetMs = opts.budgetMs ?? 5_000;
  const plan = await maintenancePlan(db);
  const started = performance.now();
  const done: MaintenanceResult['done'] = [];
  const failed: MaintenanceResult['failed'] = [];
  for (const [i, step] of plan.entries()) {
    if (i > 0 && performance.now() - started >= budgetMs) return { done, deferred: plan.slice(i), failed };
    const t0 = performance.now();
    try {
      // Writes since the plan, still unsent, would otherwise be added to the counters the VACUUM resets.
      await db.query('SELECT pg_stat_force_next_flush()');
      await db.exec(maintenanceStatement(step));
      done.push({ ...step, ms: Math.round(performance.now() - t0) });
    } catch (err) {
      failed.push({ ...step, error: err instanceof Error ? err.message : String(err) });
    }
  }
  return { done, deferred: [], failed };
}
