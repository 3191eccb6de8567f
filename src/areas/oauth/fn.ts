import { and, desc, eq, inArray, isNull, max, sql } from 'drizzle-orm';
import { z } from 'zod';
import { audit } from '../../core/audit/audit.ts';
import { credentials } from '../../core/auth/tables.ts';
import { errors } from '../../core/errors.ts';
import type { Deps } from '../../deps.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { memberships, orgs, orgsErrors } from '../orgs/index.ts';
import { decide, pendingRequest } from './authorize.ts';
import { oauthErrors } from './errors.ts';
import { oauthGrants } from './tables.ts';
import { revokeGrant } from './tokens.ts';

// The dashboard's side of OAuth: the consent page reads a pending request and records the decision; the
// tokens page lists and revokes grants. Only a dashboard session may decide (a token cannot consent on its
// own behalf), and none of these is an MCP tool.

const requestId = z.string().uuid();

async function myOrgs(deps: Deps, userId: string) {
  return deps.db.orm
    .select({ id: orgs.id, slug: orgs.slug, name: orgs.name, role: memberships.role })
    .from(memberships)
    .innerJoin(orgs, eq(orgs.id, memberships.orgId))
    .where(eq(memberships.userId, userId))
    .orderBy(orgs.slug);
}

const orgItem = z.object({ id: z.string(), slug: z.string(), name: z.string() });

export const getOauthRequestForCli = defineFn({
  name: 'getOauthRequestForCli',
  summary:
    'The consent page: which client asks for access, where it sends the answer, where the request came from.',
  auth: { kind: 'user' },
  input: z.strictObject({ requestId }),
  output: z.object({
    requestId: z.string(),
    client: z.object({ id: z.string(), name: z.string(), kind: z.enum(['cimd', 'dcr']) }),
    redirectUri: z.string(),
    redirectHost: z.string(),
    resource: z.string(),
    requestedFrom: z.object({ ip: z.string().nullable(), userAgent: z.string().nullable(), at: z.string() }),
    expiresAt: z.string(),
    orgs: z.array(orgItem.extend({ role: z.string() })),
  }),
  errors: ['OAUTH_REQUEST_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const row = await pendingRequest(deps, input.requestId);
    if (!row) throw oauthErrors.requestNotFound();
    return {
      requestId: row.id,
      client: { id: row.clientId, name: row.clientName, kind: row.clientKind as 'cimd' | 'dcr' },
      redirectUri: row.redirectUri,
      redirectHost: new URL(row.redirectUri).host,
      resource: row.resource,
      requestedFrom: { ip: row.sourceIp, userAgent: row.userAgent, at: row.createdAt.toISOString() },
      expiresAt: row.expiresAt.toISOString(),
      orgs: await myOrgs(deps, caller.userId),
    };
  },
});

export const decideOauthRequestForCli = defineFn({
  name: 'decideOauthRequestForCli',
  summary: 'Approves (for some organizations and one environment) or refuses a pending OAuth request.',
  auth: { kind: 'user' },
  input: z.strictObject({
    requestId,
    approve: z.boolean(),
    orgIds: z.array(z.string().uuid()).max(100).default([]),
    environment: z.enum(['sandbox', 'production']).default('sandbox'),
  }),
  output: z.object({ redirectTo: z.string() }),
  errors: ['OAUTH_REQUEST_NOT_FOUND', 'ORG_NOT_FOUND', 'VALIDATION_ERROR', 'FORBIDDEN'],
  handler: async ({ deps, caller }, input) => {
    if (caller.via !== 'session') throw errors.forbidden('Consent is given in the dashboard, signed in.');
    let redirectTo: string | null;
    if (input.approve) {
      if (!input.orgIds.length) throw errors.validation('orgIds: choose at least one organization.');
      const mine = new Set((await myOrgs(deps, caller.userId)).map((o) => o.id));
      if (input.orgIds.some((id) => !mine.has(id))) throw orgsErrors.orgNotFound();
      redirectTo = await decide(deps, input.requestId, caller.userId, {
        approve: true,
        orgIds: [...new Set(input.orgIds)],
        environment: input.environment,
      });
    } else {
      redirectTo = await decide(deps, input.requestId, caller.userId, { approve: false });
    }
    if (!redirectTo) throw oauthErrors.requestNotFound();
    await audit(
      deps,
      { kind: 'user', id: caller.userId },
      input.approve ? 'oauth.approve' : 'oauth.deny',
      null,
      {
        requestId: input.requestId,
        environment: input.approve ? input.environment : null,
      },
    );
    return { redirectTo };
  },
});

const grantItem = z.object({
  grantId: z.string(),
  clientId: z.string(),
  clientName: z.string(),
  redirectHost: z.string(),
  environment: z.enum(['sandbox', 'production']),
  orgs: z.array(orgItem),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
});

export const listOauthGrantsForCli = defineFn({
  name: 'listOauthGrantsForCli',
  summary: 'MCP clients the caller granted access (newest first), with their organizations and last use.',
  auth: { kind: 'user' },
  input: z.strictObject({}),
  output: z.array(grantItem),
  errors: [],
  handler: async ({ deps, caller }) => {
    const grants = await deps.db.orm
      .select()
      .from(oauthGrants)
      .where(and(eq(oauthGrants.userId, caller.userId), isNull(oauthGrants.revokedAt)))
      .orderBy(desc(oauthGrants.createdAt));
    if (!grants.length) return [];
    const ids = grants.map((g) => g.id);
    // Last use: the newest use of any of the grant's access tokens (written at most once a minute).
    const used = await deps.db.orm
      .select({ grantId: sql<string>`${credentials.meta}->>'grantId'`, at: max(credentials.lastUsedAt) })
      .from(credentials)
      .where(
        and(
          eq(credentials.kind, 'mcpat'),
          eq(credentials.userId, caller.userId),
          inArray(sql`${credentials.meta}->>'grantId'`, ids),
        ),
      )
      .groupBy(sql`${credentials.meta}->>'grantId'`);
    const lastUse = new Map(used.map((u) => [u.grantId, u.at ? new Date(u.at) : null]));
    const orgRows = await myOrgs(deps, caller.userId);
    const byId = new Map(orgRows.map((o) => [o.id, { id: o.id, slug: o.slug, name: o.name }]));
    return grants.map((g) => ({
      grantId: g.id,
      clientId: g.clientId,
      clientName: g.clientName,
      redirectHost: new URL(g.redirectUri).host,
      environment: g.environment,
      orgs: g.orgIds.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : [])),
      createdAt: g.createdAt.toISOString(),
      lastUsedAt: lastUse.get(g.id)?.toISOString() ?? null,
    }));
  },
});

export const revokeOauthGrantForCli = defineFn({
  name: 'revokeOauthGrantForCli',
  summary: "Revokes an MCP client's access: its tokens stop working at once.",
  auth: { kind: 'user' },
  input: z.strictObject({ grantId: z.string().uuid() }),
  output: z.object({ ok: z.literal(true), grantId: z.string() }),
  errors: ['OAUTH_GRANT_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const [g] = await deps.db.orm
      .select({ id: oauthGrants.id })
      .from(oauthGrants)
      .where(
        and(
          eq(oauthGrants.id, input.grantId),
          eq(oauthGrants.userId, caller.userId),
          isNull(oauthGrants.revokedAt),
        ),
      );
    if (!g) throw oauthErrors.grantNotFound();
    await revokeGrant(deps, g.id);
    await audit(deps, { kind: 'user', id: caller.userId }, 'oauth.revoke', null, { grantId: g.id });
    return { ok: true as const, grantId: g.id };
  },
});
