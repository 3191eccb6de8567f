import { and, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Db } from '../../core/db/client.ts';
import { errors } from '../../core/errors.ts';
import { UUID_RE } from '../../core/ids.ts';
import { MANAGERS, requireRole } from './access.ts';
import { orgsErrors } from './errors.ts';
import { roleSchema } from './schema.ts';
import { memberships, orgs, type Role } from './tables.ts';

// Members of an organization, managed from the dashboard (or any token). Owners and admins manage
// members; only owners grant or touch the owner role; an organization always keeps at least one owner.

export const memberItem = z.object({
  userId: z.string(),
  email: z.string(),
  role: roleSchema,
  joinedAt: z.string(),
  /**
   * True for an invitation not yet accepted: the person has not proven the address (no access yet) or has
   * not set a password.
   */
  pending: z.boolean(),
});

export const userIdInput = z.string().regex(UUID_RE, 'must be a user id');

type Tx = Parameters<Parameters<Db['orm']['transaction']>[0]>[0];

/** Locks the organization row so concurrent role changes cannot together remove the last owner. */
export async function lockedMembership(tx: Tx, orgId: string, userId: string) {
  await tx.execute(sql`select id from ${orgs} where ${orgs.id} = ${orgId} for update`);
  const [m] = await tx
    .select()
    .from(memberships)
    .where(and(eq(memberships.orgId, orgId), eq(memberships.userId, userId)));
  if (!m) throw orgsErrors.memberNotFound();
  const owners = await tx
    .select({ userId: memberships.userId })
    .from(memberships)
    .where(and(eq(memberships.orgId, orgId), eq(memberships.role, 'owner')));
  return { member: m, ownerCount: owners.length };
}

export function assertMayTouch(actorRole: Role, targetRole: Role, newRole?: Role): void {
  requireRole(actorRole, MANAGERS);
  if ((targetRole === 'owner' || newRole === 'owner') && actorRole !== 'owner')
    throw errors.forbidden('Only an owner can grant or change the owner role.');
}
