import { and, asc, eq } from 'drizzle-orm';
import { z } from 'zod';
import { audit } from '../../core/audit/audit.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { emailInput, ensureUser, getUser, isVerified, sendGrantMail, users } from '../identity/index.ts';
import { orgForUser } from './access.ts';
import { orgsErrors } from './errors.ts';
import { assertMayTouch, lockedMembership, memberItem, userIdInput } from './members.ts';
import { createOrg } from './orgs.ts';
import { grantByAddress } from './pending-grants.ts';
import { roleSchema, slugInput } from './schema.ts';
import { memberships, pendingMemberships } from './tables.ts';

export const listMembersForCli = defineFn({
  name: 'listMembersForCli',
  summary: "An organization's members with their roles, sorted by e-mail (any member may list).",
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput }),
  output: z.array(memberItem),
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, { orgSlug }) => {
    const { org } = await orgForUser(deps, caller.userId, orgSlug);
    const rows = await deps.db.orm
      .select({
        userId: users.id,
        email: users.email,
        role: memberships.role,
        joinedAt: memberships.createdAt,
        passwordHash: users.passwordHash,
      })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(eq(memberships.orgId, org.id))
      .orderBy(asc(users.email));
    const waiting = await deps.db.orm
      .select({
        userId: users.id,
        email: users.email,
        role: pendingMemberships.role,
        joinedAt: pendingMemberships.createdAt,
      })
      .from(pendingMemberships)
      .innerJoin(users, eq(users.id, pendingMemberships.userId))
      .where(eq(pendingMemberships.orgId, org.id));
    return [
      ...rows.map((r) => ({
        userId: r.userId,
        email: r.email,
        role: r.role,
        joinedAt: r.joinedAt.toISOString(),
        pending: !r.passwordHash,
      })),
      ...waiting.map((r) => ({ ...r, joinedAt: r.joinedAt.toISOString(), pending: true })),
    ].sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0));
  },
});

export const inviteMemberForCli = defineFn({
  name: 'inviteMemberForCli',
  minRole: 'manager',
  summary:
    'Invites a person to an organization by e-mail (owner or admin). The membership reaches an account only once it has proven the address (pending until then); the person is told by mail, with a set-password link when they need one. inviteUrl is always null: links go to the person, never to the inviter.',
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput, email: emailInput, role: roleSchema }),
  output: z.object({
    userId: z.string(),
    email: z.string(),
    role: roleSchema,
    alreadyMember: z.boolean(),
    /** True until the person has proven the address and has a password. */
    pending: z.boolean(),
    inviteUrl: z.string().nullable(),
    inviteExpiresAt: z.string().nullable(),
  }),
  errors: ['ORG_NOT_FOUND', 'FORBIDDEN'],
  handler: async ({ deps, caller }, input) => {
    const { org, role } = await orgForUser(deps, caller.userId, input.orgSlug);
    assertMayTouch(role, input.role);
    const { user } = await ensureUser(deps, input.email);
    // The membership waits until the account proves the address: whoever signed up first with someone
    // else's address (a squatter) gets nothing. Set-password links are mailed to the address, never
    // returned to the inviter, who could otherwise take over an account without a password.
    const { pending, inserted } = await grantByAddress(deps, { orgId: org.id, user, role: input.role });
    if (inserted) {
      await audit(deps, { kind: 'user', id: caller.userId }, 'member.invite', org.id, {
        userId: user.id,
        role: input.role,
        pending,
      });
      await sendGrantMail(deps, user, { orgName: org.name, role: input.role, kind: 'invite' });
    }
    const table = pending ? pendingMemberships : memberships;
    const [current] = await deps.db.orm
      .select({ role: table.role })
      .from(table)
      .where(and(eq(table.orgId, org.id), eq(table.userId, user.id)));
    return {
      userId: user.id,
      email: user.email,
      role: current?.role ?? input.role,
      alreadyMember: !inserted,
      pending: pending || !user.passwordHash,
      inviteUrl: null,
      inviteExpiresAt: null,
    };
  },
});

export const setMemberRoleForCli = defineFn({
  name: 'setMemberRoleForCli',
  minRole: 'manager',
  summary: "Changes a member's role (owner or admin; the owner role only by an owner). The last owner stays.",
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput, userId: userIdInput, role: roleSchema }),
  output: z.object({ ok: z.literal(true), userId: z.string(), role: roleSchema }),
  errors: ['ORG_NOT_FOUND', 'MEMBER_NOT_FOUND', 'FORBIDDEN', 'LAST_OWNER'],
  handler: async ({ deps, caller }, input) => {
    const { org, role } = await orgForUser(deps, caller.userId, input.orgSlug);
    await deps.db.orm.transaction(async (tx) => {
      const { member, ownerCount } = await lockedMembership(tx, org.id, input.userId);
      assertMayTouch(role, member.role, input.role);
      if (member.role === 'owner' && input.role !== 'owner' && ownerCount <= 1) throw orgsErrors.lastOwner();
      await tx
        .update(memberships)
        .set({ role: input.role })
        .where(and(eq(memberships.orgId, org.id), eq(memberships.userId, input.userId)));
    });
    await audit(deps, { kind: 'user', id: caller.userId }, 'member.role', org.id, {
      userId: input.userId,
      role: input.role,
    });
    return { ok: true as const, userId: input.userId, role: input.role };
  },
});

export const removeMemberForCli = defineFn({
  name: 'removeMemberForCli',
  summary: 'Removes a member (owner or admin; anyone may leave). The last owner cannot be removed.',
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput, userId: userIdInput }),
  output: z.object({ ok: z.literal(true), userId: z.string() }),
  errors: ['ORG_NOT_FOUND', 'MEMBER_NOT_FOUND', 'FORBIDDEN', 'LAST_OWNER'],
  handler: async ({ deps, caller }, input) => {
    const { org, role } = await orgForUser(deps, caller.userId, input.orgSlug);
    const [invite] = await deps.db.orm
      .select()
      .from(pendingMemberships)
      .where(and(eq(pendingMemberships.orgId, org.id), eq(pendingMemberships.userId, input.userId)));
    if (invite) {
      // A pending invitation: withdrawn like a membership, by whoever could remove that member.
      assertMayTouch(role, invite.role);
      await deps.db.orm
        .delete(pendingMemberships)
        .where(and(eq(pendingMemberships.orgId, org.id), eq(pendingMemberships.userId, input.userId)));
      await audit(deps, { kind: 'user', id: caller.userId }, 'member.remove', org.id, {
        userId: input.userId,
        pending: true,
      });
      return { ok: true as const, userId: input.userId };
    }
    await deps.db.orm.transaction(async (tx) => {
      const { member, ownerCount } = await lockedMembership(tx, org.id, input.userId);
      if (input.userId !== caller.userId) assertMayTouch(role, member.role);
      if (member.role === 'owner' && ownerCount <= 1) throw orgsErrors.lastOwner();
      await tx
        .delete(memberships)
        .where(and(eq(memberships.orgId, org.id), eq(memberships.userId, input.userId)));
    });
    await audit(deps, { kind: 'user', id: caller.userId }, 'member.remove', org.id, { userId: input.userId });
    return { ok: true as const, userId: input.userId };
  },
});

export const createOrgForCli = defineFn({
  name: 'createOrgForCli',
  summary: 'Creates an organization owned by the caller (a new user starts here).',
  auth: { kind: 'user' },
  input: z.strictObject({ slug: slugInput, name: z.string().trim().min(1).max(200) }),
  output: z.object({ id: z.string(), slug: z.string(), name: z.string(), role: roleSchema }),
  errors: ['INVALID_SLUG', 'SLUG_TAKEN', 'EMAIL_NOT_VERIFIED'],
  handler: async ({ deps, caller }, input) => {
    const me = await getUser(deps, caller.userId);
    if (!me || !isVerified(me)) throw orgsErrors.emailNotVerified();
    const org = await createOrg(deps, { slug: input.slug, name: input.name, ownerUserId: caller.userId });
    await audit(deps, { kind: 'user', id: caller.userId }, 'org.create', org.id, { slug: org.slug });
    return { id: org.id, slug: org.slug, name: org.name, role: 'owner' as const };
  },
});
