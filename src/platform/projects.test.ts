import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp, uniq } from '../../test/harness.ts';
import { seedMember, seedOrg, seedPlatform, seedProject } from '../../test/seed.ts';

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
