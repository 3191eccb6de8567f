import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type TestApp, testApp, uniq } from '../../../test/harness.ts';
import { expectError, expectTenantGuards } from '../../../test/security.ts';
import { seedMember, seedOrg, seedPlatform, seedProject, seedUser } from '../../../test/seed.ts';
import { accessCache } from './access-cache.ts';
import { createOrg } from './orgs.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});

describe('projects', () => {
  it('lists, reads and creates projects for members of the organization only', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const b = await seedProject(t.deps, org, uniq('b'));
    const a = await seedProject(t.deps, org, uniq('a'));
    const other = await seedOrg(t.deps);
    await seedProject(t.deps, other.org);

    const list = await t.call('listMyProjectsForCli', {}, owner.token);
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual(
      [a, b]
        .sort((x, y) => x.slug.localeCompare(y.slug))
        .map((p) => ({ slug: p.slug, name: p.name, orgSlug: org.slug })),
    );

    const got = await t.call('getProjectForCli', { slug: a.slug }, owner.token);
    expect(got.json()).toEqual({ id: a.id, slug: a.slug, orgId: org.id, region: 'local', status: 'ready' });

    const foreign = await t.call('getProjectForCli', { slug: a.slug }, other.owner.token);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.code).toBe('PROJECT_NOT_FOUND');
  });

  it('lets owners and admins create projects, not members', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const member = await seedMember(t.deps, org.id, 'member');
    const slug = uniq('new');
    const created = await t.call(
      'createProjectForCli',
      { orgSlug: org.slug, slug, name: 'New' },
      owner.token,
    );
    expect(created.statusCode).toBe(200);
    expect(created.json()).toMatchObject({ slug, orgId: org.id, status: 'ready' });
    const again = await t.call('createProjectForCli', { orgSlug: org.slug, slug, name: 'Dup' }, owner.token);
    expect(again.json().error.code).toBe('SLUG_TAKEN');
    const denied = await t.call(
      'createProjectForCli',
      { orgSlug: org.slug, slug: uniq('m'), name: 'M' },
      member.token,
    );
    expect(denied.statusCode).toBe(403);
    expect(denied.json().error.code).toBe('FORBIDDEN');
  });

  it('createProjectInOrg needs the project.create scope', async () => {
    const { org } = await seedOrg(t.deps);
    const good = await seedPlatform(t.deps, ['project.create']);
    const bad = await seedPlatform(t.deps, ['deploy']);
    const slug = uniq('p');
    const ok = await t.call('createProjectInOrg', { orgId: org.id, slug, name: 'P' }, good.token);
    expect(ok.statusCode).toBe(200);
    const denied = await t.call(
      'createProjectInOrg',
      { orgId: org.id, slug: uniq('p'), name: 'P' },
      bad.token,
    );
    expect(denied.statusCode).toBe(403);
    expect(denied.json().error.code).toBe('PLATFORM_SCOPE_DENIED');
    const missing = await t.call(
      'createProjectInOrg',
      { orgId: 'nope', slug: uniq('p'), name: 'P' },
      good.token,
    );
    expect(missing.json().error.code).toBe('ORG_NOT_FOUND');
  });
});

describe('project reads and creation (contract details)', () => {
  it('lists across organizations sorted by organization then project slug, without destroyed ones', async () => {
    const me = await seedUser(t.deps);
    const stem = uniq('z');
    const orgB = await createOrg(t.deps, { slug: `${stem}-b`, name: 'B', ownerUserId: me.user.id });
    const orgA = await createOrg(t.deps, { slug: `${stem}-a`, name: 'A', ownerUserId: me.user.id });
    const b2 = await seedProject(t.deps, orgB, `${stem}-b-2`);
    const b1 = await seedProject(t.deps, orgB, `${stem}-b-1`);
    const a9 = await seedProject(t.deps, orgA, `${stem}-a-9`);
    const gone = await seedProject(t.deps, orgA, `${stem}-a-0`);
    await t.deps.db.query("UPDATE projects SET status = 'destroyed', destroyed_at = now() WHERE id = $1", [
      gone.id,
    ]);
    const list = (await t.call('listMyProjectsForCli', {}, me.token)).json();
    expect(list).toEqual([
      { slug: a9.slug, name: a9.name, orgSlug: orgA.slug },
      { slug: b1.slug, name: b1.name, orgSlug: orgB.slug },
      { slug: b2.slug, name: b2.name, orgSlug: orgB.slug },
    ]);
    expectError(await t.call('getProjectForCli', { slug: gone.slug }, me.token), 404, 'PROJECT_NOT_FOUND');
    // A destroyed project frees its slug.
    const again = await t.call(
      'createProjectForCli',
      { orgSlug: orgA.slug, slug: gone.slug, name: 'Again' },
      me.token,
    );
    expect(again.statusCode).toBe(200);
  });

  it('shows errorMessage only when status is error, and nothing about secrets, scaling or git', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const p = await seedProject(t.deps, org);
    await t.deps.db.query("UPDATE projects SET error_message = 'stale' WHERE id = $1", [p.id]);
    const ready = (await t.call('getProjectForCli', { slug: p.slug }, owner.token)).json();
    expect(Object.keys(ready).sort()).toEqual(['id', 'orgId', 'region', 'slug', 'status']);
    await t.deps.db.query(
      "UPDATE projects SET status = 'error', error_message = 'Out of disk.' WHERE id = $1",
      [p.id],
    );
    const failed = (await t.call('getProjectForCli', { slug: p.slug }, owner.token)).json();
    expect(failed).toEqual({
      id: p.id,
      slug: p.slug,
      orgId: org.id,
      region: 'local',
      status: 'error',
      errorMessage: 'Out of disk.',
    });
  });

  it('getProjectForCli: any member reads; another organization gets 404', async () => {
    await expectTenantGuards(t, {
      name: 'getProjectForCli',
      body: (c) => ({ slug: c.projectSlug }),
      notFound: 'PROJECT_NOT_FOUND',
      managersOnly: false,
    });
  });

  it('createProjectForCli: owner/admin only, other organization 404 ORG_NOT_FOUND', async () => {
    await expectTenantGuards(t, {
      name: 'createProjectForCli',
      body: (c) => ({ orgSlug: c.orgSlug, slug: uniq('g'), name: 'G' }),
      notFound: 'ORG_NOT_FOUND',
      managersOnly: true,
    });
  });

  it('validates slugs and regions; slugs are global across organizations', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const create = (body: Record<string, unknown>) =>
      t.call('createProjectForCli', { orgSlug: org.slug, name: 'P', ...body }, owner.token);
    for (const slug of ['ab', 'A-b-c', 'x'.repeat(41), 'a_b_c', 'www', '-abc'])
      expectError(await create({ slug }), 400, 'INVALID_SLUG');
    expectError(await create({ slug: uniq('r'), region: 'mars-1' }), 400, 'INVALID_REGION');
    const foreign = await seedProject(t.deps, (await seedOrg(t.deps)).org);
    expectError(await create({ slug: foreign.slug }), 409, 'SLUG_TAKEN');
    expectError(await create({ slug: uniq('r'), name: '' }), 400, 'VALIDATION_ERROR');
  });

  it('createProjectInOrg creates in any organization without giving access', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const plat = await seedPlatform(t.deps, ['project.create']);
    const slug = uniq('prov');
    const res = await t.call(
      'createProjectInOrg',
      { orgId: org.id, slug, name: 'Provisioned', region: 'local' },
      plat.token,
    );
    expect(res.json()).toEqual({
      id: expect.any(String),
      slug,
      orgId: org.id,
      region: 'local',
      status: 'ready',
    });
    expectError(await t.call('getProjectForCli', { slug }, plat.token), 403, 'FORBIDDEN');
    expect((await t.call('getProjectForCli', { slug }, owner.token)).statusCode).toBe(200);
    const unknown = '00000000-0000-4000-8000-000000000000';
    expectError(
      await t.call('createProjectInOrg', { orgId: unknown, slug: uniq('p'), name: 'P' }, plat.token),
      404,
      'ORG_NOT_FOUND',
    );
    expectError(
      await t.call('createProjectInOrg', { orgId: org.id, slug: 'BAD', name: 'P' }, plat.token),
      400,
      'INVALID_SLUG',
    );
  });
});

// One more app (they are slow to build on a busy machine): configured regions and the invalidation bus.
describe('with REGIONS set and the invalidation bus running', () => {
  let live: TestApp;
  beforeAll(async () => {
    live = await testApp({ background: true, env: { REGIONS: 'eu-west, us-east' } });
  });
  afterAll(async () => {
    await live?.close();
  });

  it('takes regions from config (REGIONS), the first one by default', async () => {
    {
      const regional = live;
      const { org, owner } = await seedOrg(regional.deps);
      const call = (body: Record<string, unknown>) =>
        regional.call(
          'createProjectForCli',
          { orgSlug: org.slug, slug: uniq('r'), name: 'R', ...body },
          owner.token,
        );
      expect((await call({})).json().region).toBe('eu-west');
      expect((await call({ region: 'us-east' })).json().region).toBe('us-east');
      expectError(await call({ region: 'local' }), 400, 'INVALID_REGION');
    }
  });

  it('drops access at once when a membership is removed or a role lowered, by any writer', async () => {
    {
      const { org, owner } = await seedOrg(live.deps);
      const admin = await seedMember(live.deps, org.id, 'admin');
      const p = await seedProject(live.deps, org, uniq('c'));
      const read = (token: string) => live.call('getProjectForCli', { slug: p.slug }, token);
      const setSecret = (token: string) =>
        live.call('setSecretForCli', { projectSlug: p.slug, key: 'K', value: 'v' }, token);
      expect((await read(admin.token)).statusCode).toBe(200);
      expect((await setSecret(admin.token)).statusCode).toBe(200); // cached as admin now
      expect(accessCache(live.deps).size).toBeGreaterThan(0);
      // Lowered to member by a plain SQL write (no Pier code path to forget the cache).
      await live.deps.db.query("UPDATE memberships SET role = 'member' WHERE user_id = $1", [admin.user.id]);
      await vi.waitFor(async () => expectError(await setSecret(admin.token), 403, 'FORBIDDEN'), {
        timeout: 2000,
        interval: 5,
      });
      await live.deps.db.query('DELETE FROM memberships WHERE user_id = $1', [admin.user.id]);
      await vi.waitFor(async () => expectError(await read(admin.token), 404, 'PROJECT_NOT_FOUND'), {
        timeout: 2000,
        interval: 5,
      });
      // Status changes show up too.
      expect((await read(owner.token)).json().status).toBe('ready');
      await live.deps.db.query("UPDATE projects SET status = 'error', error_message = 'x' WHERE id = $1", [
        p.id,
      ]);
      await vi.waitFor(async () => expect((await read(owner.token)).json().status).toBe('error'), {
        timeout: 2000,
        interval: 5,
      });
    }
  });
});
