import { eq } from 'drizzle-orm';
import { issuePersonalToken } from '../src/areas/identity/tokens.ts';
import { ensureUser } from '../src/areas/identity/users.ts';
import { issueApiKey } from '../src/areas/orgs/api-keys.ts';
import { addMember, createOrg } from '../src/areas/orgs/orgs.ts';
import { createProject } from '../src/areas/orgs/projects.ts';
import type { Plan, Role } from '../src/areas/orgs/tables.ts';
import { orgs } from '../src/areas/orgs/tables.ts';
import type { Deps } from '../src/deps.ts';
import { uniq } from './harness.ts';

// Typed seeders: each test makes its own tenant so tests never depend on order.

export async function seedUser(deps: Deps, email = `${uniq('u')}@example.com`) {
  const { user } = await ensureUser(deps, email);
  const { token } = await issuePersonalToken(deps, user.id, 'test token');
  return { user, token };
}

export async function seedOrg(deps: Deps, opts: { plan?: Plan } = {}) {
  const owner = await seedUser(deps);
  const org = await createOrg(deps, { slug: uniq('org'), name: 'Test Org', ownerUserId: owner.user.id });
  if (opts.plan) await deps.db.orm.update(orgs).set({ plan: opts.plan }).where(eq(orgs.id, org.id));
  return { org: { ...org, plan: opts.plan ?? org.plan }, owner };
}

export async function seedMember(deps: Deps, orgId: string, role: Role) {
  const m = await seedUser(deps);
  await addMember(deps, orgId, m.user.id, role);
  return m;
}

export async function seedProject(deps: Deps, org: typeof orgs.$inferSelect, slug = uniq('prj')) {
  return createProject(deps, org, { slug, name: `Project ${slug}` });
}

export async function seedPlatform(deps: Deps, scopes: string[]) {
  return deps.credentials.issue({ kind: 'plat', scopes, label: 'test platform' });
}

export async function seedOperator(deps: Deps) {
  return deps.credentials.issue({ kind: 'op', label: 'test operator' });
}

/** A v1 API key of an organization: live acts in production, test in sandbox. */
export async function seedApiKey(deps: Deps, orgId: string, kind: 'live' | 'test' = 'live') {
  const { token, row } = await issueApiKey(deps, orgId, kind);
  return { key: token, keyId: row.keyId };
}

/** An organization with a live and a test key (the usual v1 tenant). */
export async function seedV1Tenant(deps: Deps) {
  const { org, owner } = await seedOrg(deps);
  const live = await seedApiKey(deps, org.id, 'live');
  const test = await seedApiKey(deps, org.id, 'test');
  return { org, owner, live: live.key, test: test.key };
}
