import crypto from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import type { Deps } from '../../deps.ts';
import { identityErrors } from './errors.ts';
import { passwordLinks } from './tables.ts';
import { getUser, type User } from './users.ts';

// One-time links to set a password, for users created by an operator, a partner (createOrganization) or an
// invitation. The token travels in the URL fragment, so it never reaches server or proxy logs.

export const PASSWORD_LINK_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** 'verify' links prove an address at sign-up (/verify-email); the others set a password. */
export type LinkPurpose = 'invite' | 'operator' | 'verify';

export async function createPasswordLink(
  deps: Deps,
  userId: string,
  purpose: LinkPurpose,
): Promise<{ url: string; expiresAt: Date }> {
  const token = crypto.randomBytes(32).toString('base64url');
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + PASSWORD_LINK_TTL_MS);
  await deps.db.orm.insert(passwordLinks).values({
    tokenHash: deps.keyring.hashSecret(token),
    userId,
    purpose,
    createdAt: now,
    expiresAt,
  });
  const page = purpose === 'verify' ? 'verify-email' : 'set-password';
  return { url: `${deps.config.publicUrl}/${page}#token=${token}`, expiresAt };
}

/** The link's user when the link is unused and unexpired; LINK_INVALID otherwise (no reason given). */
export async function checkPasswordLink(
  deps: Deps,
  token: string,
  kind: 'password' | 'verify' = 'password',
): Promise<{ id: string; user: User }> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) throw identityErrors.linkInvalid();
  const [row] = await deps.db.orm
    .select()
    .from(passwordLinks)
    .where(eq(passwordLinks.tokenHash, deps.keyring.hashSecret(token)));
  if (!row || row.usedAt || row.expiresAt.getTime() <= deps.clock.now().getTime())
    throw identityErrors.linkInvalid();
  if ((row.purpose === 'verify') !== (kind === 'verify')) throw identityErrors.linkInvalid();
  const user = await getUser(deps, row.userId);
  if (!user) throw identityErrors.linkInvalid();
  return { id: row.id, user };
}

/** Marks the link used; exactly one of concurrent uses wins. */
export async function consumePasswordLink(deps: Deps, linkId: string): Promise<void> {
  const claimed = await deps.db.orm
    .update(passwordLinks)
    .set({ usedAt: deps.clock.now() })
    .where(and(eq(passwordLinks.id, linkId), isNull(passwordLinks.usedAt)))
    .returning({ id: passwordLinks.id });
  if (!claimed.length) throw identityErrors.linkInvalid();
}
