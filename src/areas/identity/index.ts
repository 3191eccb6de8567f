import type { Deps } from '../../deps.ts';
import { defineArea } from '../manifest.ts';
import { dashboardAuthRoutes } from './auth-routes.ts';
import { identityCatalogue } from './errors.ts';
import { adminCreateInviteLink, adminVerifyUser } from './invite-links-fn.ts';
import { createLoginCodeForCli, exchangeCliAuthCode } from './login-codes-fn.ts';
import {
  createTokenForCli,
  listTokensForCli,
  revokeTokenByIdForCli,
  updateTokenLabelForCli,
} from './personal-tokens-fn.ts';
import { sessionResolver } from './sessions.ts';
import { revokeTokenForCli, whoamiForCli } from './tokens-fn.ts';

// Identity: people (accounts, passwords, password links, dashboard sessions), their personal tokens,
// one-time login codes and the operator key. Its account tables migrate with the orgs area's `platform` set.

export const identityArea = defineArea({
  name: 'identity',
  errors: [identityCatalogue],
  fns: [
    exchangeCliAuthCode,
    createLoginCodeForCli,
    whoamiForCli,
    revokeTokenForCli,
    createTokenForCli,
    listTokensForCli,
    updateTokenLabelForCli,
    revokeTokenByIdForCli,
    adminCreateInviteLink,
    adminVerifyUser,
  ],
  http: dashboardAuthRoutes,
  callerResolver: sessionResolver,
  migrations: [{ area: 'dashboard', schema: ['src/areas/identity/tables.ts'] }],
  notTools: [
    'exchangeCliAuthCode',
    'createLoginCodeForCli',
    'revokeTokenForCli',
    'adminCreateInviteLink',
    'adminVerifyUser',
  ],
});

// What identity asks of areas it cannot import without a cycle; one area provides each (docs/areas.md).
declare module '../../deps.ts' {
  interface Provided {
    /** Pier's own mail (verification links, invitations), queued by the mail area. */
    sendSystemMail?: (
      deps: Deps,
      m: { to: string; subject: string; text: string },
    ) => Promise<{ id: string }>;
    /** Called when an account proved its address (orgs: pending grants become memberships). */
    onEmailVerified?: (deps: Deps, userId: string) => Promise<void>;
  }
}

export { loginCodes, users } from './account-tables.ts';
export { isVerified, markEmailVerified, sendGrantMail } from './email-verification.ts';
export { identityErrors } from './errors.ts';
export { mintLoginCode } from './login-codes.ts';
export { ensureOperatorKey } from './operator-key.ts';
export { createPasswordLink } from './password-links.ts';
export { hashPassword } from './passwords.ts';
export { emailInput, userSchema } from './schema.ts';
export { issuePersonalToken } from './tokens.ts';
export { ensureUser, findUserByEmail, getUser, type User } from './users.ts';
