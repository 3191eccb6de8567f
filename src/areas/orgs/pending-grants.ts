import { and, eq } from 'drizzle-orm';
import type { Deps } from '../../deps.ts';
import { isVerified, type User } from '../identity/index.ts';
import { memberships, pendingMemberships, type Role } from './tables.ts';

// Grants by e-mail address (an invitation, createOrganization) wait here until the account proves the
// address (docs/decisions/033-verified-email-senders.md): a pending grant is not a membership, so every
// access check stays as it is. The identity area calls promotePendingGrants (through deps.provided) when
// an address is proven.

/** Turns the account's pending grants into memberships (existing memberships keep their role). */
export async function promotePendingGrants(deps: Deps, userId: string): Promise<void> {
  await deps.db.orm.transaction(async (tx) => {
    const pending = await tx
      .delete(pendingMemberships)
      .where(eq(pendingMemberships.userId, userId))
      .returning();
    if (!pending.length) return;
    await tx
      .insert(memberships)
      .values(pending.map((p) => ({ orgId: p.orgId, userId, role: p.role, createdAt: deps.clock.now() })))
      .onConflictDoNothing();
  });
}

/**
 * Grants a role by address: a membership for a verified account, a pending grant otherwise (which an
 * existing membership or pending grant leaves alone). `inserted` is false when nothing new was recorded.
 */
export async function grantByAddress(
  deps: Deps,
  input: { orgId: string; user: User; role: Role },
): Promise<{ pending: boolean; inserted: boolean }> {
  const row = { orgId: input.orgId, userId: input.user.id, role: input.role, createdAt: deps.clock.now() };
  if (isVerified(input.user)) {
    const done = await deps.db.orm
      .insert(memberships)
      .values(row)
      .onConflictDoNothing()
      .returning({ r: memberships.role });
    return { pending: false, inserted: done.length > 0 };
  }
  const [member] = await deps.db.orm
    .select({ r: memberships.role })
    .from(memberships)
    .where(and(eq(memberships.orgId, input.orgId), eq(memberships.userId, input.user.id)));
  if (member) return { pending: false, inserted: false };
  const done = await deps.db.orm
    .insert(pendingMemberships)
    .values(row)
    .onConflictDoNothing()
    .returning({ r: pendingMemberships.role });
  return { pending: true, inserted: done.length > 0 };
}
