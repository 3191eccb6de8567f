import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, type TestApp, testApp } from '../../../test/harness.ts';
import { expectError, expectTenantGuards } from '../../../test/security.ts';
import { seedOrg, seedProject } from '../../../test/seed.ts';
import type { Db } from '../../core/db/client.ts';
import { projectSecretEnv } from './secrets.ts';
import { secrets } from './tables.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});

async function tenant(plan?: 'free' | 'pro') {
  const { org, owner } = await seedOrg(t.deps, { plan });
  const project = await seedProject(t.deps, org);
  const set = (key: string, value: string, token = owner.token) =>
    t.call('setSecretForCli', { projectSlug: project.slug, key, value }, token);
  return { org, owner, project, set };
}

/** Fills a project up to `n` secrets directly (the quota tests need hundreds). */
async function fill(projectId: string, n: number) {
  const rows = Array.from({ length: n }, (_, i) => ({
    projectId,
    key: `FILLER_${i}`,
    valueEnc: t.deps.keyring.encrypt('x'),
  }));
  await t.deps.db.orm.insert(secrets).values(rows);
}

describe('setSecretForCli', () => {
  it('creates and replaces a secret; values are write-only', async () => {
    const { project, set, owner } = await tenant();
    const res = await set('STRIPE_KEY', 'sk_first');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true, key: 'STRIPE_KEY' });
    expect((await set('STRIPE_KEY', 'sk_second')).json()).toEqual({ ok: true, key: 'STRIPE_KEY' });
    expect(await projectSecretEnv(t.deps, project.id)).toEqual({ STRIPE_KEY: 'sk_second' });
    const list = await t.call('listSecretsForCli', { projectSlug: project.slug }, owner.token);
    expect(list.json()).toEqual([{ key: 'STRIPE_KEY', updatedAt: expect.any(String) }]);
    expect(list.body).not.toContain('sk_second');
  });

  it('accepts 1 to 65536 bytes (INVALID_VALUE outside), counting bytes not characters', async () => {
    const { set } = await tenant();
    expect((await set('ONE', 'x')).statusCode).toBe(200);
    expect((await set('MAX', 'x'.repeat(65536))).statusCode).toBe(200);
    expect((await set('EMOJI', '€'.repeat(21845))).statusCode).toBe(200); // 65535 bytes
    expectError(await set('EMPTY', ''), 400, 'INVALID_VALUE');
    expectError(await set('BIG', 'x'.repeat(65537)), 400, 'INVALID_VALUE');
    expectError(await set('EMOJI2', '€'.repeat(21846)), 400, 'INVALID_VALUE'); // 65538 bytes
  });

  it('refuses malformed keys (INVALID_KEY) and platform-reserved ones (PROTECTED_KEY)', async () => {
    const { set } = await tenant();
    for (const key of ['lower', '1ABC', '_ABC', 'A-B', 'A B', '', 'ÄBC']) {
      expectError(await set(key, 'v'), 400, 'INVALID_KEY');
    }
    for (const key of ['PORT', 'DATABASE_URL', 'HOST', 'NODE_ENV', 'PIER_', 'PIER_TOKEN']) {
      expectError(await set(key, 'v'), 400, 'PROTECTED_KEY');
    }
    for (const key of ['PORTS', 'MY_PORT', 'A', 'A1_B2', 'PIERX'])
      expect((await set(key, 'v')).statusCode).toBe(200);
  });

  it('holds the free plan to 50 secrets per project; replacing never counts', async () => {
    const { project, set } = await tenant();
    await fill(project.id, 49);
    expect((await set('FIFTIETH', 'v')).statusCode).toBe(200);
    expectError(await set('FIFTY_FIRST', 'v'), 400, 'QUOTA_EXCEEDED');
    expect((await set('FIFTIETH', 'v2')).statusCode).toBe(200);
    expect((await set('FILLER_0', 'v2')).statusCode).toBe(200);
  });

  it('holds the pro plan to 500 secrets per project', async () => {
    const { project, set } = await tenant('pro');
    await fill(project.id, 499);
    expect((await set('FIVE_HUNDREDTH', 'v')).statusCode).toBe(200);
    expectError(await set('ONE_MORE', 'v'), 400, 'QUOTA_EXCEEDED');
  });

  it('cannot be raced past the quota by concurrent writers', async () => {
    const { project, set } = await tenant();
    await fill(project.id, 45);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => set(`RACE_${i}`, 'v')));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(5);
    for (const r of results.filter((x) => x.statusCode !== 200)) expectError(r, 400, 'QUOTA_EXCEEDED');
  });

  it('guards tenants and roles: other org 404, member 403, admin allowed', async () => {
    await expectTenantGuards(t, {
      name: 'setSecretForCli',
      body: (c) => ({ projectSlug: c.projectSlug, key: 'A_KEY', value: 'v' }),
      notFound: 'PROJECT_NOT_FOUND',
      managersOnly: true,
    });
  });

  it('answers PROJECT_NOT_FOUND for an unknown or destroyed project', async () => {
    const { owner, project, set } = await tenant();
    expectError(
      await t.call('setSecretForCli', { projectSlug: 'no-such', key: 'A', value: 'v' }, owner.token),
      404,
      'PROJECT_NOT_FOUND',
    );
    await t.deps.db.query('UPDATE projects SET destroyed_at = now() WHERE id = $1', [project.id]);
    expectError(await set('A', 'v'), 404, 'PROJECT_NOT_FOUND');
  });
});

describe('removeSecretForCli', () => {
  it('removes a secret and says whether it existed', async () => {
    const { owner, project, set } = await tenant();
    await set('GONE_SOON', 'v');
    const rm = (key: string) => t.call('removeSecretForCli', { projectSlug: project.slug, key }, owner.token);
    expect((await rm('GONE_SOON')).json()).toEqual({ ok: true, key: 'GONE_SOON', removed: true });
    expect((await rm('GONE_SOON')).json()).toEqual({ ok: true, key: 'GONE_SOON', removed: false });
    expectError(await rm('bad key'), 400, 'INVALID_KEY');
    expect(await projectSecretEnv(t.deps, project.id)).toEqual({});
  });

  it('frees quota room', async () => {
    const { owner, project, set } = await tenant();
    await fill(project.id, 50);
    expectError(await set('NEW', 'v'), 400, 'QUOTA_EXCEEDED');
    await t.call('removeSecretForCli', { projectSlug: project.slug, key: 'FILLER_3' }, owner.token);
    expect((await set('NEW', 'v')).statusCode).toBe(200);
  });

  it('guards tenants and roles', async () => {
    await expectTenantGuards(t, {
      name: 'removeSecretForCli',
      body: (c) => ({ projectSlug: c.projectSlug, key: 'A_KEY' }),
      notFound: 'PROJECT_NOT_FOUND',
      managersOnly: true,
    });
  });
});

describe('listSecretsForCli', () => {
  it('lists keys sorted, to every member, never values', async () => {
    await expectTenantGuards(t, {
      name: 'listSecretsForCli',
      body: (c) => ({ projectSlug: c.projectSlug }),
      notFound: 'PROJECT_NOT_FOUND',
      managersOnly: false,
    });
    const { owner, project, set } = await tenant();
    await set('ZED', 'zzz-value');
    await set('ALPHA', 'aaa-value');
    const res = await t.call('listSecretsForCli', { projectSlug: project.slug }, owner.token);
    expect(res.json().map((s: { key: string }) => s.key)).toEqual(['ALPHA', 'ZED']);
    expect(res.body).not.toMatch(/-value/);
  });
});

async function dumpAllRows(db: Db): Promise<string> {
  const { rows: tables } = await db.query<{ s: string; n: string }>(
    `SELECT table_schema AS s, table_name AS n FROM information_schema.tables
     WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
  );
  let out = '';
  for (const { s, n } of tables) {
    const { rows } = await db.query<{ r: string }>(`SELECT t::text AS r FROM "${s}"."${n}" t`);
    out += rows.map((r) => r.r).join('\n');
  }
  return out;
}

function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

describe('encryption at rest', () => {
  it('leaves the plain value in no database row and no file under DATA_DIR', async () => {
    const disk = await testApp({ persist: true });
    const marker = `plain-${crypto.randomBytes(12).toString('hex')}`;
    try {
      const { org, owner } = await seedOrg(disk.deps);
      const project = await seedProject(disk.deps, org);
      const res = await disk.call(
        'setSecretForCli',
        { projectSlug: project.slug, key: 'MARKED', value: marker },
        owner.token,
      );
      expect(res.statusCode).toBe(200);
      const dump = await dumpAllRows(disk.deps.db);
      expect(dump).toContain('MARKED'); // the dump does see the secrets table
      expect(dump).not.toContain(marker);
      expect(await projectSecretEnv(disk.deps, project.id)).toEqual({ MARKED: marker });
      if (disk.deps.db.pglite) await disk.deps.db.pglite.query('CHECKPOINT');
    } finally {
      await disk.close();
    }
    const files = filesUnder(disk.dataDir);
    if (!onPostgres) expect(files.length).toBeGreaterThan(100); // PGlite's cluster lives here
    const needle = Buffer.from(marker);
    for (const f of files) expect(fs.readFileSync(f).includes(needle), f).toBe(false);
    fs.rmSync(disk.dataDir, { recursive: true, force: true });
  });
});
