import { eq } from 'drizzle-orm';
import type { Deps } from '../../deps.ts';
import { orgsErrors } from './errors.ts';
import { orgs } from './tables.ts';

// What the operator functions (admin-fn.ts) share: an organization by slug, the operator as audit actor.

export async function orgBySlug(deps: Deps, slug: string) {
  const [org] = await deps.db.orm.select().from(orgs).where(eq(orgs.slug, slug));
  if (!org) throw orgsErrors.orgNotFound(slug);
  return org;
}

export const op = (caller: { keyId: string }) => ({ kind: 'operator', id: caller.keyId });
