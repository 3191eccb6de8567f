import { isUniqueViolation } from '../../core/db/pg-errors.ts';
import type { Deps } from '../../deps.ts';
import { orgsErrors } from './errors.ts';
import { assertSlug, slugFromName } from './slugs.ts';
import { memberships, orgs, pendingMemberships, type Role } from './tables.ts';

export async function createOrg(
  deps: Deps,
  input: { slug?: string; name: string; ownerUserId: string; ownerPending?: boolean },
): Promise<typeof orgs.$inferSelect> {
  if (input.slug !== undefined) assertSlug(input.slug);
  // A derived slug retries with a random suffix; an explicit one is the caller's choice and can be taken.
  for (let attempt = 0; attempt < 5; attempt++) {
    const slug = input.slug ?? slugFromName(input.name, attempt > 0);
    try {
      return await deps.db.orm.transaction(async (tx) => {
        const [org] = await tx
          .insert(orgs)
          .values({ slug, name: input.name, createdAt: deps.clock.now() })
          .returning();
        // A pending owner (an unproven address) becomes the owner when the address is proven.
        await tx
          .insert(input.ownerPending ? pendingMemberships : memberships)
          .values({ orgId: org!.id, userId: input.ownerUserId, role: 'owner' });
        return org!;
      });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      if (input.slug !== undefined) throw orgsErrors.slugTaken(slug);
    }
  }
  throw orgsErrors.slugTaken(input.name);
}

export async function addMember(deps: Deps, orgId: string, userId: string, role: Role): Promise<void> {
  await deps.db.orm
    .insert(memberships)
    .values({ orgId, userId, role, createdAt: deps.clock.now() })
    .onConflictDoUpdate({ target: [memberships.orgId, memberships.userId], set: { role } });
}
