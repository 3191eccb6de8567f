import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, type TestApp, testApp } from '../../../../test/harness.ts';
import { seedOrg, seedProject } from '../../../../test/seed.ts';
import { AppDbServers } from './app-databases.ts';

// Each project's database is its own: on PostgreSQL a database + least-privilege role, on PGlite a data
// folder served on loopback. Both give the app a DATABASE_URL the `pg` client can use.

let t: TestApp;
let dbs: AppDbServers;
beforeAll(async () => {
  t = await testApp();
  dbs = new AppDbServers(t.deps);
});
afterAll(async () => {
  await dbs?.closeAll();
  await t?.close();
});

async function query(url: string, sql: string) {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => {});
  await c.connect();
  try {
    return (await c.query(sql)).rows;
  } finally {
    await c.end();
  }
}

describe('project databases', () => {
  it('gives each project a database of its own that the app can write', async () => {
    const { org } = await seedOrg(t.deps);
    const a = await seedProject(t.deps, org);
    const b = await seedProject(t.deps, org);
    const urlA = await dbs.urlFor(a.id);
    const urlB = await dbs.urlFor(b.id);
    expect(urlA).not.toBe(urlB);
    await query(urlA, 'create table notes (body text); insert into notes values (1)');
    expect(await query(urlA, 'select count(*)::int as n from notes')).toEqual([{ n: 1 }]);
    await expect(query(urlB, 'select * from notes')).rejects.toThrow(/notes/);
  });

  it.runIf(onPostgres)('uses a least-privilege role that cannot reach Pier or other apps', async () => {
    const { org } = await seedOrg(t.deps);
    const a = await seedProject(t.deps, org);
    const b = await seedProject(t.deps, org);
    const urlA = new URL(await dbs.urlFor(a.id));
    const urlB = new URL(await dbs.urlFor(b.id));
    const [role] = await query(
      urlA.toString(),
      'select rolsuper, rolcreatedb, rolcreaterole from pg_roles where rolname = current_user',
    );
    expect(role).toEqual({ rolsuper: false, rolcreatedb: false, rolcreaterole: false });
    // A's credentials on B's database, and on Pier's own database, are refused.
    const cross = new URL(urlA);
    cross.pathname = urlB.pathname;
    await expect(query(cross.toString(), 'select 1')).rejects.toThrow(/permission denied/);
    const pier = new URL(urlA);
    pier.pathname = new URL(t.deps.config.databaseUrl!).pathname;
    await expect(query(pier.toString(), 'select 1')).rejects.toThrow(/permission denied/);
  });
});
