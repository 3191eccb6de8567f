import { asc, eq } from 'drizzle-orm';
import { z } from 'zod';
import { audit } from '../../core/audit/audit.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { emailInput, ensureUser, isVerified, sendGrantMail, userSchema } from '../identity/index.ts';
import { createOrg } from './orgs.ts';
import { organizationSchema } from './schema.ts';
import { memberships, orgs } from './tables.ts';

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
