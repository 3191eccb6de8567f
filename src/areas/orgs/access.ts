import { and, eq, isNull } from 'drizzle-orm';
import { errors } from '../../core/errors.ts';
import { isUuid } from '../../core/ids.ts';
import type { Deps } from '../../deps.ts';
import { accessCache } from './access-cache.ts';
import { orgsErrors } from './errors.ts';
import { memberships, type Org, orgs, type Project, projects, type Role } from './tables.ts';

export type { Org, Project };

export const MANAGERS: Role[] = ['owner', 'admin'];

export function requireRole(role: Role, allowed: Role[]): void {
  if (!allowed.includes(role)) throw errors.forbidden(`This needs the ${allowed.join(' or ')} role.`);
}

/** The organization by slug with the user's role; not a member → 404, so existence does not leak. */
export async function orgForUser(
  deps: Deps,
  userId: string,
  orgSlug: string,
): Promise<{ org: Org; role: Role }> {
  const [row] = await deps.db.orm
    .select({ org: orgs, role: memberships.role })
    .from(orgs)
    .innerJoin(memberships, and(eq(memberships.orgId, orgs.id), eq(memberships.userId, userId)))
    .where(eq(orgs.slug, orgSlug));
  if (!row) throw orgsErrors.orgNotFound(orgSlug);
  return row;
}

/** A live (not destroyed) project the user can see, with their role in its organization. */
export async function projectForUser(
  deps: Deps,
  userId: string,
  slug: string,
): Promise<{ project: Project; org: Org; role: Role }> {
  const cache = accessCache(deps);
  const now = deps.clock.nowMs();
  const hit = cache.get(userId, slug, now);
  if (hit) return hit;
  const generation = cache.generation();
  const [row] = await deps.db.orm
    .select({ project: projects, org: orgs, role: memberships.role })
    .from(projects)
    .innerJoin(orgs, eq(orgs.id, projects.orgId))
    .innerJoin(memberships, and(eq(memberships.orgId, projects.orgId), eq(memberships.userId, userId)))
    .where(and(eq(projects.slug, slug), isNull(projects.destroyedAt)));
  if (!row) throw orgsErrors.projectNotFound(slug);
  cache.set(userId, slug, row, now, generation);
  return row;
}

export async function findOrgById(deps: Deps, orgId: string): Promise<Org | null> {
  if (!isUuid(orgId)) return null;
  const [org] = await deps.db.orm.select().from(orgs).where(eq(orgs.id, orgId));
  return org ?? null;
}

/**
 * The project an API-key caller names (`projectSlug` in a v1 request): a live project of the key's own
 * organization, or PROJECT_NOT_FOUND — another organization's project is indistinguishable from none.
 * One resolver for every v1 area that takes a projectSlug (CDN, web data, workflows).
 */
export async function projectForApiKey(deps: Deps, orgId: string, slug: string): Promise<Project> {
  const [row] = await deps.db.orm
    .select()
    .from(projects)
    .where(and(eq(projects.orgId, orgId), eq(projects.slug, slug), isNull(projects.destroyedAt)));
  if (!row) throw orgsErrors.projectNotFound(slug);
  return row;
}
