import { z } from 'zod';
import { audit } from '../../core/audit/audit.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { markEmailVerified } from './email-verification.ts';
import { identityErrors } from './errors.ts';
import { createPasswordLink } from './password-links.ts';
import { emailInput } from './schema.ts';
import { ensureUser, findUserByEmail } from './users.ts';

// `pier admin user invite-link --email E`: a one-time, expiring link to set a password, for users created
// by createOrganization or `pier admin` (until mail delivery sends it).
export const adminCreateInviteLink = defineFn({
  name: 'adminCreateInviteLink',
  summary: 'Creates a one-time link (7 days) for a user (created if new) to set a password.',
  auth: { kind: 'operator' },
  input: z.strictObject({ email: emailInput }),
  output: z.object({ url: z.string(), expiresAt: z.string(), email: z.string() }),
  errors: [],
  handler: async ({ deps, caller }, { email }) => {
    const { user } = await ensureUser(deps, email);
    const { url, expiresAt } = await createPasswordLink(deps, user.id, 'operator');
    await audit(deps, { kind: 'operator', id: caller.keyId }, 'user.invite-link', null, { userId: user.id });
    return { url, expiresAt: expiresAt.toISOString(), email: user.email };
  },
});

// `pier admin user verify --email E`: the operator vouches for the address (they know its owner), so what
// was granted to it reaches the account. It withdraws nothing: the account's holder is taken as its owner.
export const adminVerifyUser = defineFn({
  name: 'adminVerifyUser',
  summary: "Marks a user's e-mail address as verified; pending invitations become memberships.",
  auth: { kind: 'operator' },
  input: z.strictObject({ email: emailInput }),
  output: z.object({ id: z.string(), email: z.string(), emailVerified: z.literal(true) }),
  errors: ['USER_NOT_FOUND'],
  handler: async ({ deps, caller }, { email }) => {
    const user = await findUserByEmail(deps, email);
    if (!user) throw identityErrors.userNotFound(email);
    await markEmailVerified(deps, user.id);
    await audit(deps, { kind: 'operator', id: caller.keyId }, 'user.verify', null, { userId: user.id });
    return { id: user.id, email: user.email, emailVerified: true as const };
  },
});
