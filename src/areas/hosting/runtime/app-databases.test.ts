import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, type TestApp, testApp } from '../../../../test/harness.ts';
import { seedOrg, seedProject } from '../../../../test/seed.ts';
import { AppDbServers } from './app-databases.ts';

// Each project's database is its own: on PostgreSQL a database + least-privilege role, on PGlite a data
// folder. Both reach the app through the project's database socket (db-gate.ts), which checks the project's
// password and pins its role and database; both give a DATABASE_URL the `pg` client can use.

/** The URLs as an unsandboxed process sees them (the socket's host path, not /run/pier/db). */
const HOST = { sandboxed: false };

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
    const urlA = await dbs.urlFor(a.id, HOST);
    const urlB = await dbs.urlFor(b.id, HOST);
    expect(urlA).not.toBe(urlB);
    await query(urlA, 'create table notes (body text); insert into notes values (1)');
    expect(await query(urlA, 'select count(*)::int as n from notes')).toEqual([{ n: 1 }]);
    await expect(query(urlB, 'select * from notes')).rejects.toThrow(/notes/);
  });

  it('refuses a wrong password, another role and another database at the socket', async () => {
    const { org } = await seedOrg(t.deps);
    const a = await seedProject(t.deps, org);
    const b = await seedProject(t.deps, org);
    const urlA = new URL(await dbs.urlFor(a.id, HOST));
    const urlB = new URL(await dbs.urlFor(b.id, HOST));
    expect(urlA.searchParams.get('host')).not.toBe(urlB.searchParams.get('host'));
    const wrong = new URL(urlA);
    wrong.password = 'guess';
    await expect(query(wrong.toString(), 'select 1')).rejects.toThrow(/password authentication failed/);
    const none = new URL(urlA);
    none.password = '';
    await expect(query(none.toString(), 'select 1')).rejects.toThrow();
    // B's role and password at A's socket: the socket only knows A.
    const otherRole = new URL(urlB);
    otherRole.searchParams.set('host', urlA.searchParams.get('host')!);
    await expect(query(otherRole.toString(), 'select 1')).rejects.toThrow(/password authentication failed/);
    const otherDb = new URL(urlA);
    otherDb.pathname = urlB.pathname;
    await expect(query(otherDb.toString(), 'select 1')).rejects.toThrow(/is not yours/);
  });

  it.runIf(onPostgres)('uses a least-privilege role that cannot reach Pier or other apps', async () => {
    const { org } = await seedOrg(t.deps);
    const a = await seedProject(t.deps, org);
    const b = await seedProject(t.deps, org);
    const urlA = new URL(await dbs.urlFor(a.id, HOST));
    const urlB = new URL(await dbs.urlFor(b.id, HOST));
    const [role] = await query(
      urlA.toString(),
      'select rolsuper, rolcreatedb, rolcreaterole from pg_roles where rolname = current_user',
    );
    expect(role).toEqual({ rolsuper: false, rolcreatedb: false, rolcreaterole: false });
    // A's credentials on B's database, and on Pier's own database, are refused.
    // The role itself, straight on the server (as Pier could connect): no other database either.
    const direct = new URL(t.deps.config.databaseUrl!);
    direct.username = urlA.username;
    direct.password = urlA.password;
    const cross = new URL(direct);
    cross.pathname = urlB.pathname;
    await expect(query(cross.toString(), 'select 1')).rejects.toThrow(/permission denied/);
    await expect(query(direct.toString(), 'select 1')).rejects.toThrow(/permission denied/);
  });
});
