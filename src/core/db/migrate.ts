import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate as migrateNodePg } from 'drizzle-orm/node-postgres/migrator';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import type { Db } from './client.ts';
import type { MigrationSet } from './migration-sets.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const MIGRATION_LOCK = 0x70_69_65_72; // 'pier'

export type MigrateResult = { applied: string[]; skipped: { area: string; reason: string }[] };

async function ensureExtension(db: Db, name: string): Promise<boolean> {
  try {
    await db.exec(`CREATE EXTENSION IF NOT EXISTS ${name}`);
    return true;
  } catch {
    return false;
  }
}

/** Applies every area's migrations in order; safe to run from several processes at once on PostgreSQL. */
export async function migrate(db: Db, sets: readonly MigrationSet[]): Promise<MigrateResult> {
  const result: MigrateResult = { applied: [], skipped: [] };
  if (db.kind === 'postgres') await db.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  try {
    if (await ensureExtension(db, 'pg_trgm')) db.features.add('pg_trgm');
    for (const set of sets) {
      if (set.requires) {
        if (!(await ensureExtension(db, set.requires))) {
          result.skipped.push({ area: set.area, reason: `extension '${set.requires}' is not available` });
          continue;
        }
        db.features.add(set.requires);
      }
      const config = {
        migrationsFolder: path.join(root, 'migrations', set.area),
        migrationsTable: `__migrations_${set.area}`,
        migrationsSchema: 'public',
      };
      if (db.kind === 'pglite') await migratePglite(db.orm as never, config);
      else await migrateNodePg(db.orm as never, config);
      result.applied.push(set.area);
    }
  } finally {
    if (db.kind === 'postgres') await db.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
  }
  return result;
}
