import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrationSets } from '../src/areas/index.ts';
import { openDb } from '../src/core/db/client.ts';
import { migrate } from '../src/core/db/migrate.ts';
import { templateKey } from './template-key.ts';

// Global setup of the PGlite project. A fresh PGlite spends seconds in initdb (WASM) and migrations, once per
// test app; a copy of a migrated data folder opens in about one. The folder is kept between runs under
// node_modules/.cache, keyed by the migrations and the PGlite version, so it is rebuilt only when they change.
// Copies go to a per-run scratch folder (in memory under /dev/shm when there is one), removed at the end.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

async function buildTemplate(): Promise<string> {
  const cache = path.join(root, 'node_modules/.cache/pier-test');
  const dir = path.join(cache, `pglite-${templateKey()}`);
  if (fs.existsSync(path.join(dir, 'PG_VERSION'))) return dir;
  fs.mkdirSync(cache, { recursive: true });
  const tmp = `${dir}.${process.pid}.tmp`;
  fs.rmSync(tmp, { recursive: true, force: true });
  const db = await openDb({ dataDir: tmp });
  await migrate(db, migrationSets);
  await db.close();
  // Another run may have finished the same template meanwhile; either copy is good.
  try {
    fs.renameSync(tmp, dir);
  } catch {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}

export default async function setup(): Promise<() => void> {
  const template = await buildTemplate();
  const base = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
  const scratch = fs.mkdtempSync(path.join(base, 'pier-test-db-'));
  // Read by test/harness.ts in the test workers, which inherit this environment.
  process.env.PIER_TEST_PGLITE_TEMPLATE = template;
  process.env.PIER_TEST_PGLITE_SCRATCH = scratch;
  return () => fs.rmSync(scratch, { recursive: true, force: true });
}
