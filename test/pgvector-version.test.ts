import { afterEach, describe, expect, it } from 'vitest';
import { migrationSets } from '../src/areas/index.ts';
import { migrate, versionAtLeast } from '../src/core/db/migrate.ts';
import { openTestDb, testApp } from './harness.ts';

// Memory recall needs pgvector 0.8.0 (hnsw.iterative_scan). A database whose installed `vector` is older
// must stop Pier at start-up with the versions and the fix, not fail with a SQL error at the first recall.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

describe('extension versions', () => {
  it('compares dotted versions numerically', () => {
    expect(versionAtLeast('0.8.1', '0.8.0')).toBe(true);
    expect(versionAtLeast('0.8.0', '0.8.0')).toBe(true);
    expect(versionAtLeast('0.10.0', '0.8.0')).toBe(true);
    expect(versionAtLeast('0.7.4', '0.8.0')).toBe(false);
    expect(versionAtLeast('0.8', '0.8.0')).toBe(true);
  });

  it('refuses to start on a pgvector older than recall needs, naming the version', async () => {
    const { db, drop } = await openTestDb();
    cleanups.push(async () => {
      await db.close();
      await drop();
    });
    await migrate(db, migrationSets);
    expect(db.features.has('vector')).toBe(true);
    // What a server upgraded from an old pgvector without ALTER EXTENSION … UPDATE looks like.
    await db.exec(`UPDATE pg_extension SET extversion = '0.7.4' WHERE extname = 'vector'`);
    await expect(testApp({ db })).rejects.toThrow(
      /'memory' area needs the PostgreSQL extension 'vector' 0\.8\.0 or newer, but this database has 0\.7\.4: .*ALTER EXTENSION vector UPDATE/,
    );
    await db.exec(`UPDATE pg_extension SET extversion = '0.8.1' WHERE extname = 'vector'`);
    const t = await testApp({ db });
    expect(t.deps.db.features.has('vector')).toBe(true);
    await t.close();
  });
});
