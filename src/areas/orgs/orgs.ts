import { asc, eq } from 'drizzle-orm';
import { z } from 'zod';
import { audit } from '../../core/audit/audit.ts';
import { isUniqueViolation } from '../../core/db/pg-errors.ts';
import type { Deps } from '../../deps.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { emailInput, ensureUser, isVerified, sendGrantMail, userSchema } from '../identity/index.ts';
import { orgsErrors } from './errors.ts';
import { organizationSchema } from './schema.ts';
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

export const listMyOrgsForCli = defineFn({
  name: 'listMyOrgsForCli',
  summary: "The caller's organizations with their role, sorted by slug.",
  auth: { kind: 'user' },
  input: z.strictObject({}),
  output: z.array(organizationSchema),
  errors: [],
  handler: async ({ deps, caller }) => {
    const rows = await deps.db.orm
      .select({ id: orgs.id, slug: orgs.slug, name: orgs.name, role: memberships.role })
      .from(memberships)
      .innerJoin(orgs, eq(orgs.id, memberships.orgId))
      .where(eq(memberships.userId, caller.userId))
      .orderBy(asc(orgs.slug));
    return rows;
  },
});

export const createOrganization = defineFn({
  name: 'createOrganization',
  summary:
    'Creates an organization owned by the customer with that e-mail (created if new). Scope org.create. The customer is told by mail; an account that has not proven the address becomes the owner when it does.',
  auth: { kind: 'platform', scope: 'org.create' },
  input: z.strictObject({
    email: emailInput,
    name: z.string().trim().min(1).max(200),
    slug: z.string().optional(),
  }),
  output: z.object({ id: z.string(), slug: z.string(), name: z.string(), owner: userSchema }),
  errors: ['INVALID_SLUG', 'SLUG_TAKEN'],
  handler: async ({ deps, caller }, input) => {
    const { user } = await ensureUser(deps, input.email);
    const org = await createOrg(deps, {
      slug: input.slug,
      name: input.name,
      ownerUserId: user.id,
      ownerPending: !isVerified(user),
    });
    await audit(deps, { kind: 'platform', id: caller.keyId }, 'org.create', org.id, { slug: org.slug });
    await sendGrantMail(deps, user, { orgName: org.name, role: 'owner', kind: 'created' });
    return { id: org.id, slug: org.slug, name: org.name, owner: { id: user.id, email: user.email } };
  },
});
