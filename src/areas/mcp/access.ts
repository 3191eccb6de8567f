import { eq, inArray } from 'drizzle-orm';
import type { Caller, Environment } from '../../core/auth/caller.ts';
import { errors } from '../../core/errors.ts';
import type { Deps } from '../../deps.ts';
import {
  MANAGERS,
  memberships,
  orgForUser,
  orgs,
  orgsErrors,
  projectForUser,
  type Role,
} from '../orgs/index.ts';
import type { Tool } from './tools.ts';

// Which tools a credential sees, and the checks made before a call (docs/mcp.md "Authorisation"). The
// routes behind the tools check everything again: this layer only leaves out what cannot work and narrows
// an OAuth grant to the organizations and environment the user consented to.

export type UserCaller = Extract<Caller, { kind: 'user' }>;
export type ApiKeyCaller = Extract<Caller, { kind: 'apikey' }>;

/** The name of the inline deploy tool (deploy-tool.ts); it needs the manager role somewhere. */
export const DEPLOY_TOOL = 'deployApp';

/** Account-wide reads an OAuth grant may use (their answers are narrowed to the granted organizations). */
export const OAUTH_ACCOUNT_READS = new Set(['whoamiForCli', 'listMyOrgsForCli', 'listMyProjectsForCli']);

/** Functions whose org can be checked from their arguments (OAuth grants reach only these). */
function orgScoped(tool: Tool): boolean {
  const props = tool.inputSchema.properties ?? {};
  return 'orgSlug' in props || 'projectSlug' in props;
}

type Membership = { orgId: string; role: Role };

async function membershipsOf(deps: Deps, caller: UserCaller): Promise<Membership[]> {
  const rows = await deps.db.orm
    .select({ orgId: memberships.orgId, role: memberships.role })
    .from(memberships)
    .where(eq(memberships.userId, caller.userId));
  const granted = caller.oauth?.orgIds;
  return granted ? rows.filter((r) => granted.includes(r.orgId)) : rows;
}

/** Whether a credential of this kind can call the tool at all (no database; roles aside). */
export function usableBy(caller: Caller, tool: Tool | { name: string; kind: 'deploy' }): boolean {
  switch (caller.kind) {
    case 'operator':
      return false;
    case 'apikey':
      return tool.kind === 'v1';
    case 'platform':
      return (
        tool.kind === 'fn' && tool.fn.auth.kind === 'platform' && caller.scopes.includes(tool.fn.auth.scope)
      );
    case 'user':
      if (tool.kind === 'v1' || tool.kind === 'deploy') return true;
      if (tool.fn.auth.kind !== 'user') return false;
      return !caller.oauth || orgScoped(tool) || OAUTH_ACCOUNT_READS.has(tool.name);
  }
}

/** The tools to list for this caller: usable by its kind and, for a person, allowed by some role held. */
export async function visibleTools(deps: Deps, caller: Caller, tools: readonly Tool[]) {
  const usable = tools.filter((t) => usableBy(caller, t));
  if (caller.kind !== 'user') return { tools: usable, deploy: false };
  const roles = new Set((await membershipsOf(deps, caller)).map((m) => m.role));
  const manager = roles.has('owner') || roles.has('admin');
  const allowed = usable.filter((t) => {
    if (t.kind === 'v1') return roles.size > 0;
    if (t.fn.minRole === 'owner') return roles.has('owner');
    if (t.fn.minRole === 'manager') return manager;
    return true;
  });
  return { tools: allowed, deploy: manager };
}

/** An OAuth grant reaches an organization only when the user granted it; checked before any call. */
export async function checkOAuthArgs(deps: Deps, caller: UserCaller, args: Record<string, unknown>) {
  const grant = caller.oauth;
  if (!grant) return;
  if (typeof args.orgSlug === 'string') {
    const { org } = await orgForUser(deps, caller.userId, args.orgSlug);
    if (!grant.orgIds.includes(org.id)) throw orgsErrors.orgNotFound(args.orgSlug);
  }
  if (typeof args.projectSlug === 'string') {
    const { org } = await projectForUser(deps, caller.userId, args.projectSlug);
    if (!grant.orgIds.includes(org.id)) throw orgsErrors.projectNotFound(args.projectSlug);
  }
  if (typeof args.environment === 'string' && args.environment !== grant.environment) {
    throw errors.forbidden(`This sign-in was granted the ${grant.environment} environment only.`);
  }
}

/** Keeps only the granted organizations in an account-wide read's answer (OAuth). */
export async function narrowToGrant(deps: Deps, caller: UserCaller, name: string, result: unknown) {
  const grant = caller.oauth;
  if (!grant || !Array.isArray(result)) return result;
  if (name === 'listMyOrgsForCli')
    return result.filter((o: { id?: string }) => grant.orgIds.includes(o.id ?? ''));
  if (name !== 'listMyProjectsForCli') return result;
  const granted = grant.orgIds.length
    ? await deps.db.orm.select({ slug: orgs.slug }).from(orgs).where(inArray(orgs.id, grant.orgIds))
    : [];
  const slugs = new Set(granted.map((o) => o.slug));
  return result.filter((p: { orgSlug?: string }) => slugs.has(p.orgSlug ?? ''));
}

/**
 * The organization a v1 tool acts in when no `organization` is given: the only one the credential reaches
 * (the user's memberships, narrowed to an OAuth grant's organizations). With none or several it is a
 * VALIDATION_ERROR that names the choices, so that an agent can ask again with one of them.
 */
async function onlyOrganization(deps: Deps, caller: UserCaller): Promise<string> {
  const orgIds = (await membershipsOf(deps, caller)).map((m) => m.orgId);
  const rows = orgIds.length
    ? await deps.db.orm.select({ slug: orgs.slug }).from(orgs).where(inArray(orgs.id, orgIds))
    : [];
  const slugs = rows.map((o) => o.slug).sort();
  if (slugs.length === 1) return slugs[0]!;
  if (slugs.length === 0) {
    throw errors.validation('organization: this credential reaches no organization to act in.');
  }
  const shown = slugs.slice(0, 20).join(', ') + (slugs.length > 20 ? `, … (${slugs.length} in all)` : '');
  throw errors.validation(
    `organization: required, since this credential reaches several organizations: ${shown}.`,
  );
}

/**
 * The organization-and-environment caller a user's token acts as on a v1 route: a member of the named
 * organization, in sandbox unless asked otherwise; production needs the owner or admin role (they may make
 * live keys anyway) and, for OAuth, a production grant.
 */
export async function v1CallerFor(
  deps: Deps,
  caller: UserCaller,
  organization: unknown,
  environment: unknown,
): Promise<ApiKeyCaller> {
  if (organization === undefined || organization === null || organization === '') {
    organization = await onlyOrganization(deps, caller);
  }
  if (typeof organization !== 'string') {
    throw errors.validation('organization: the slug of the organization to act in, as a string.');
  }
  if (environment !== undefined && environment !== 'sandbox' && environment !== 'production') {
    throw errors.validation('environment: must be sandbox or production.');
  }
  const grant = caller.oauth;
  const env: Environment = (environment as Environment | undefined) ?? grant?.environment ?? 'sandbox';
  const { org, role } = await orgForUser(deps, caller.userId, organization);
  if (grant && !grant.orgIds.includes(org.id)) throw orgsErrors.orgNotFound(organization);
  if (grant && env !== grant.environment) {
    throw errors.forbidden(`This sign-in was granted the ${grant.environment} environment only.`);
  }
  if (env === 'production' && !MANAGERS.includes(role)) {
    throw errors.forbidden('Production needs the owner or admin role; members act in sandbox.');
  }
  return {
    kind: 'apikey',
    credentialId: caller.credentialId,
    // One rate-limit bucket per personal credential (the v1 plugin keys buckets by keyId).
    keyId: `mcp-${caller.credentialId}`,
    orgId: org.id,
    environment: env,
  };
}
