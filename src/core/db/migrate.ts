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

/** `a >= b` for dotted version numbers ('0.10.0' >= '0.8.1'); a part that is not a number counts as 0. */
export function versionAtLeast(a: string, b: string): boolean {
  const pa = a.split('.').map((n) => Number.parseInt(n, 10) || 0);
  const pb = b.split('.').map((n) => Number.parseInt(n, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d > 0;
  }
  return true;
}

/** Stops start-up when the installed extension is older than the set needs, saying what to do. */
async function checkExtensionVersion(
  db: Db,
  set: MigrationSet,
  name: string,
  minimum: string,
): Promise<void> {
  const { rows } = await db.query<{ installed: string; available: string | null }>(
    `SELECT e.extversion AS installed, a.default_version AS available
       FROM pg_extension e LEFT JOIN pg_available_extensions a ON a.name = e.extname
      WHERE e.extname = $1`,
    [name],
  );
  const found = rows[0];
  if (!found || versionAtLeast(found.installed, minimum)) return;
  const fix =
    found.available && versionAtLeast(found.available, minimum)
      ? `the server has ${found.available}: run ALTER EXTENSION ${name} UPDATE; in this database`
      : `install a newer ${name} on the database server (docs/operations.md, "pgvector") and run ALTER EXTENSION ${name} UPDATE;`;
  throw new Error(
    `The '${set.area}' area needs the PostgreSQL extension '${name}' ${minimum} or newer, but this database has ${found.installed}: ${fix}`,
  );
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
        if (set.requiresVersion) await checkExtensionVersion(db, set, set.requires, set.requiresVersion);
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
