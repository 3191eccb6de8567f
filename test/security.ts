import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { FnAuth } from '../src/http/fn-kit.ts';
import type { TestApp } from './harness.ts';
import { seedMember, seedOperator, seedOrg, seedPlatform, seedProject } from './seed.ts';

// The one place the security cases live: every function's credential guards, and the tenant/role guards
// of functions that act on an organization's resources. Tests call these instead of copying the cases.

export const WWW_AUTHENTICATE =
  'Bearer resource_metadata="http://pier.test/.well-known/oauth-protected-resource"';

/** Asserts the error envelope with a status and code. */
export function expectError(res: LightMyRequestResponse, status: number, code: string): void {
  expect({ status: res.statusCode, code: res.json()?.error?.code }).toEqual({ status, code });
  expect(typeof res.json().error.message).toBe('string');
  expect(Object.keys(res.json())).toEqual(['error']);
}

export function expectAuthRequired(res: LightMyRequestResponse): void {
  expectError(res, 401, 'AUTH_REQUIRED');
  expect(res.headers['www-authenticate']).toBe(WWW_AUTHENTICATE);
}

const memo = new WeakMap<TestApp, Map<string, ReturnType<typeof makeCredentials>>>();

/** Credentials are made once per app and auth kind: the guards only read with them. */
function credentialsByKind(t: TestApp, auth: FnAuth) {
  const key = `${auth.kind}:${'scope' in auth ? auth.scope : ''}`;
  let perApp = memo.get(t);
  if (!perApp) {
    perApp = new Map();
    memo.set(t, perApp);
  }
  if (!perApp.has(key)) perApp.set(key, makeCredentials(t, auth));
  return perApp.get(key)!;
}

/** One live credential of every kind (platform with every scope but the one `auth` needs, if any), and a
 * revoked and an expired one of the right kind. */
async function makeCredentials(t: TestApp, auth: FnAuth) {
  const { org, owner } = await seedOrg(t.deps);
  const all = ['org.create', 'project.create', 'deploy', 'model.resolve'];
  const plat = await seedPlatform(t.deps, all);
  const op = await seedOperator(t.deps);
  const live = await t.deps.credentials.issue({ kind: 'sk_live', orgId: org.id, label: 'api key' });
  const test = await t.deps.credentials.issue({ kind: 'sk_test', orgId: org.id, label: 'api key' });
  const scopeless =
    auth.kind === 'platform'
      ? (
          await seedPlatform(
            t.deps,
            all.filter((s) => s !== auth.scope),
          )
        ).token
      : null;
  const right = auth.kind === 'user' ? 'pk' : auth.kind === 'platform' ? 'plat' : 'op';
  const scopes = auth.kind === 'platform' ? [auth.scope] : [];
  const userId = right === 'pk' ? owner.user.id : undefined;
  const revoked = await t.deps.credentials.issue({ kind: right, userId, scopes, label: 'revoked' });
  await t.deps.credentials.revoke(revoked.row.id);
  const expiresAt = new Date(t.clock.now().getTime() - 1);
  const expired = await t.deps.credentials.issue({ kind: right, userId, scopes, label: 'old', expiresAt });
  return {
    user: owner.token,
    platform: plat.token,
    operator: op.token,
    live: live.token,
    test: test.token,
    scopeless,
    revoked: revoked.token,
    expired: expired.token,
  };
}

/**
 * A function needing a credential answers 401 AUTH_REQUIRED (with WWW-Authenticate) for a missing,
 * malformed, unknown, revoked or expired one; 403 FORBIDDEN for a credential of the wrong kind; and a
 * platform function 403 PLATFORM_SCOPE_DENIED for a platform credential without its scope.
 */
export async function expectCredentialGuards(t: TestApp, name: string, auth: FnAuth, body: unknown = {}) {
  if (auth.kind === 'none') return;
  expectAuthRequired(await t.call(name, body));
  for (const header of ['Bearer', 'Bearer pk.short.x', 'Basic dXNlcjpwYXNz', 'pk.abc.def', 'Bearer a b']) {
    expectAuthRequired(await t.call(name, body, undefined, { authorization: header }));
  }
  // Well-formed but unknown: a keyId nobody issued, and a real keyId with a wrong secret.
  const creds = await credentialsByKind(t, auth);
  expectAuthRequired(await t.call(name, body, `pk.AAAAAAAAAAAAAAAA.${'x'.repeat(43)}`));
  const [kind, keyId] = creds.user.split('.');
  expectAuthRequired(await t.call(name, body, `${kind}.${keyId}.${'y'.repeat(43)}`));
  // Another kind's prefix on a real keyId and secret is not that kind.
  expectAuthRequired(await t.call(name, body, creds.user.replace(/^pk\./, 'plat.')));

  const kinds = { user: creds.user, platform: creds.platform, operator: creds.operator } as const;
  for (const [k, token] of Object.entries(kinds)) {
    if (k === auth.kind) continue;
    expectError(await t.call(name, body, token), 403, 'FORBIDDEN');
  }
  expectError(await t.call(name, body, creds.live), 403, 'FORBIDDEN');
  expectError(await t.call(name, body, creds.test), 403, 'FORBIDDEN');
  if (creds.scopeless) expectError(await t.call(name, body, creds.scopeless), 403, 'PLATFORM_SCOPE_DENIED');

  // Revoked and expired credentials of the right kind.
  expectAuthRequired(await t.call(name, body, creds.revoked));
  expectAuthRequired(await t.call(name, body, creds.expired));
}

export type TenantCase = {
  name: string;
  /** A valid body for a resource of `org` (its project `projectSlug`). */
  body: (ctx: { orgSlug: string; orgId: string; projectSlug: string }) => unknown;
  /** The code another organization's member gets (the resource must look absent). */
  notFound: 'PROJECT_NOT_FOUND' | 'ORG_NOT_FOUND';
  /** owner/admin only: a member gets 403 FORBIDDEN. Otherwise a member succeeds. */
  managersOnly: boolean;
};

/**
 * Another organization's owner gets 404 (never 403: existence does not leak); a member gets 403 when the
 * function needs owner or admin, 200 otherwise; an admin gets 200.
 */
export async function expectTenantGuards(t: TestApp, c: TenantCase): Promise<void> {
  const { org } = await seedOrg(t.deps);
  const stranger = await seedOrg(t.deps);
  const member = await seedMember(t.deps, org.id, 'member');
  const admin = await seedMember(t.deps, org.id, 'admin');
  const project = await seedProject(t.deps, org);
  const ctx = { orgSlug: org.slug, orgId: org.id, projectSlug: project.slug };

  expectError(await t.call(c.name, c.body(ctx), stranger.owner.token), 404, c.notFound);
  const asMember = await t.call(c.name, c.body(ctx), member.token);
  if (c.managersOnly) expectError(asMember, 403, 'FORBIDDEN');
  else expect(asMember.statusCode).toBe(200);
  const asAdmin = await t.call(c.name, c.body({ ...ctx }), admin.token);
  expect(asAdmin.statusCode, asAdmin.body).toBe(200);
}
