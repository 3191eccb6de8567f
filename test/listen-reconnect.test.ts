import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessCache } from '../src/areas/orgs/access-cache.ts';
import { Keyring } from '../src/core/crypto.ts';
import { onPostgres, restartableTestDb, type TestApp, testApp } from './harness.ts';
import { seedApiKey, seedMember, seedProject, seedV1Tenant } from './seed.ts';

// Two nodes on one PostgreSQL database. Each keeps per-process caches of credentials and of project access,
// kept honest by LISTEN connections that carry revocations and membership changes from the other nodes.
// When such a connection dies (here: its backend is terminated, as a restart or failover would) the node
// must not trust its caches — it checks the database (fail closed) — and must listen again by itself.
// PGlite is one process with no separate connection, so this runs on PostgreSQL only.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!onPostgres)('LISTEN connections that die', () => {
  let a: TestApp;
  let b: TestApp;
  let store: Awaited<ReturnType<typeof restartableTestDb>>;
  beforeAll(async () => {
    store = await restartableTestDb();
    const keyring = Keyring.random();
    a = await testApp({ db: await store.open(), keyring, background: true });
    b = await testApp({ db: await store.open(), keyring, background: true });
  });
  afterAll(async () => {
    for (const t of [a, b]) {
      await t?.close();
      await t?.deps.db.close();
    }
    await store?.drop();
  });

  /** Terminates every LISTEN backend of this database (both nodes'); returns how many. */
  async function terminateListeners(): Promise<number> {
    const r = await a.deps.db.query<{ n: number }>(
      `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`,
    );
    return r.rows[0]!.n;
  }
  async function listeners(channel: string): Promise<number> {
    const r = await a.deps.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND state = 'idle' AND query = $1`,
      [`LISTEN "${channel}"`],
    );
    return r.rows[0]!.n;
  }
  async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
    const start = Date.now();
    while (!(await check())) {
      if (Date.now() - start > ms) throw new Error(`not within ${ms} ms`);
      await sleep(20);
    }
    return Date.now() - start;
  }

  it('refuses a revoked key on the other node within 1 s, then listens again', async () => {
    const tenant = await seedV1Tenant(a.deps);
    const first = await seedApiKey(a.deps, tenant.org.id);
    const second = await seedApiKey(a.deps, tenant.org.id);
    // Node B has verified (and cached) both keys.
    for (const { key } of [first, second])
      expect((await b.v1('GET', '/mail/emails', key)).statusCode).toBe(200);
    expect(b.deps.credentials.verifyCached(first.key)).toBeTruthy();

    expect(await terminateListeners()).toBeGreaterThanOrEqual(2);
    const revoked = await a.call(
      'revokeApiKeyForCli',
      { orgSlug: tenant.org.slug, keyId: first.keyId },
      tenant.owner.token,
    );
    expect(revoked.statusCode).toBe(200);
    const took = await within(
      1000,
      async () => (await b.v1('GET', '/mail/emails', first.key)).statusCode === 401,
    );
    expect(took).toBeLessThan(1000);

    // Node B reconnects by itself and serves from its cache again; revocations reach it by NOTIFY.
    await within(10_000, async () => (await listeners('pier_credential_revoked')) >= 2);
    await within(5_000, async () => {
      await b.v1('GET', '/mail/emails', second.key);
      return b.deps.credentials.verifyCached(second.key) != null;
    });
    await a.call('revokeApiKeyForCli', { orgSlug: tenant.org.slug, keyId: second.keyId }, tenant.owner.token);
    await within(1000, async () => b.deps.credentials.verifyCached(second.key) === undefined);
    expect((await b.v1('GET', '/mail/emails', second.key)).statusCode).toBe(401);
  });

  it('stops serving project access from cache while disconnected, and serves again once listening', async () => {
    const tenant = await seedV1Tenant(a.deps);
    const project = await seedProject(a.deps, tenant.org);
    const member = await seedMember(a.deps, tenant.org.id, 'member');
    const get = () => b.call('getProjectForCli', { slug: project.slug }, member.token);
    expect((await get()).statusCode).toBe(200);
    const cache = accessCache(b.deps);
    expect(cache.enabled).toBe(true);

    await terminateListeners();
    const removed = await a.call(
      'removeMemberForCli',
      { orgSlug: tenant.org.slug, userId: member.user.id },
      tenant.owner.token,
    );
    expect(removed.statusCode).toBe(200);
    await within(1000, async () => (await get()).statusCode === 404);
    // Back on by itself once its LISTEN connection is up again.
    await within(10_000, async () => cache.enabled);
    // Both nodes listen again (each on its own back-off).
    await within(10_000, async () => (await listeners('pier_access_changed')) >= 2);
    expect((await get()).statusCode).toBe(404);
  });
});
