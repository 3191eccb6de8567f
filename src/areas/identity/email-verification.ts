import { and, eq, isNull } from 'drizzle-orm';
import { credentials } from '../../core/auth/tables.ts';
import type { Deps } from '../../deps.ts';
import { users } from './account-tables.ts';
import { createPasswordLink } from './password-links.ts';
import { revokeUserSessions } from './sessions.ts';
import type { User } from './users.ts';

type Role = 'owner' | 'admin' | 'member';

/**
 * Pier's own mail, sent by the mail area (declared in its manifest, deps.provided): identity cannot import
 * mail, which reaches identity through orgs.
 */
function sendSystemMail(deps: Deps, m: { to: string; subject: string; text: string }): Promise<unknown> {
  const send = deps.provided.sendSystemMail;
  if (!send) throw new Error('No area provides sendSystemMail.');
  return send(deps, m);
}

// Verified e-mail addresses (docs/decisions/033-verified-email-senders.md). Anything granted by address (an
// invitation, an organization a partner creates for a customer) reaches an account only once the account
// has proven it receives mail there; until then the grant waits in pending_memberships.
//
// Proofs: the verification link mailed at sign-up (opened while signed in as that account), a set-password
// link (only ever mailed to the address), a login code the operator minted for the address, or the
// operator's `pier admin user verify`. The first two of those that were not asked for by the account's own
// holder *claim* the account: whoever held it without proof (a squatter who signed up first) is signed out
// everywhere and loses the password they chose.

export function isVerified(user: Pick<User, 'emailVerifiedAt'>): boolean {
  return user.emailVerifiedAt !== null;
}

/** Records the proof (once) and hands over what was waiting for it. */
export async function markEmailVerified(deps: Deps, userId: string): Promise<void> {
  await deps.db.orm
    .update(users)
    .set({ emailVerifiedAt: deps.clock.now() })
    .where(and(eq(users.id, userId), isNull(users.emailVerifiedAt)));
  // The orgs area turns the grants that waited for this proof into memberships.
  await deps.provided.onEmailVerified?.(deps, userId);
}

/**
 * A proof that did not come from the account's own holder (a mailed set-password link, an operator's login
 * code). If the account was unproven, everything its holder had is withdrawn first: sessions, personal
 * tokens and the password (replaced by `passwordHash`, or none).
 */
export async function claimByProof(
  deps: Deps,
  user: User,
  passwordHash: string | null | undefined,
): Promise<void> {
  if (!isVerified(user)) {
    await revokeUserSessions(deps, user.id);
    const tokens = await deps.db.orm
      .select({ id: credentials.id })
      .from(credentials)
      .where(and(eq(credentials.userId, user.id), eq(credentials.kind, 'pk'), isNull(credentials.revokedAt)));
    for (const t of tokens) await deps.credentials.revoke(t.id);
    await deps.db.orm
      .update(users)
      .set({ passwordHash: passwordHash ?? null })
      .where(eq(users.id, user.id));
  } else if (passwordHash) {
    await deps.db.orm.update(users).set({ passwordHash }).where(eq(users.id, user.id));
  }
  await markEmailVerified(deps, user.id);
}

/** Mails the account's verification link (the sign-up proof; it must be opened signed in as the account). */
export async function sendVerificationMail(deps: Deps, user: User): Promise<void> {
  const { url } = await createPasswordLink(deps, user.id, 'verify');
  // Without SMTP_URL the mail never leaves Pier: the operator's own console gets this one-time link, the
  // only secret Pier ever logs (docs/decisions/103).
  if (!deps.config.smtp) deps.log.info(`No SMTP_URL: the verification link for ${user.email} is ${url}`);
  await sendSystemMail(deps, {
    to: user.email,
    subject: 'Verify your e-mail address for Pier',
    text: [
      `Someone (we hope you) created a Pier account for ${user.email}.`,
      '',
      `To verify this address, open this link in the browser where you are signed in to Pier:`,
      url,
      '',
      'If you did not sign up, ignore this message: nothing reaches that account until the address is verified.',
    ].join('\n'),
  });
}

/** Answers a sign-up for an address whose account nobody has proven: its owner may take it over. */
export async function sendClaimMail(deps: Deps, user: User): Promise<void> {
  const { url } = await createPasswordLink(deps, user.id, 'invite');
  await sendSystemMail(deps, {
    to: user.email,
    subject: 'Your Pier account',
    text: [
      `Someone tried to sign up to Pier as ${user.email}; an account with this address exists, but nobody has`,
      'verified the address yet. If it is yours, set its password with this link; whoever else held the',
      'account is signed out:',
      url,
      '',
      'If you did not try to sign up, ignore this message.',
    ].join('\n'),
  });
}

/**
 * Tells a person about a grant waiting for them. An unproven account (or one without a password) gets a
 * set-password link, which proves the address when used: it is mailed to the address, never handed to
 * whoever made the grant.
 */
export async function sendGrantMail(
  deps: Deps,
  user: User,
  what: { orgName: string; role: Role; kind: 'invite' | 'created' },
): Promise<void> {
  const intro =
    what.kind === 'created'
      ? `An organization, ${what.orgName}, was created for you on Pier; you are its ${what.role}.`
      : `You were invited to ${what.orgName} on Pier as ${what.role === 'admin' ? 'an' : 'a'} ${what.role}.`;
  const lines = [intro, ''];
  if (!isVerified(user) || !user.passwordHash) {
    const { url, expiresAt } = await createPasswordLink(deps, user.id, 'invite');
    lines.push(
      'To accept, set a password for your account with this link (it works once, until',
      `${expiresAt.toISOString().slice(0, 10)}):`,
      url,
    );
  } else {
    lines.push(`Sign in to see it: ${deps.config.publicUrl}/sign-in`);
  }
  const subject =
    what.kind === 'created' ? `${what.orgName} was created for you on Pier` : `Join ${what.orgName} on Pier`;
  await sendSystemMail(deps, { to: user.email, subject, text: lines.join('\n') });
}
