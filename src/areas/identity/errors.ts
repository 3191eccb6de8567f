import { defineCatalogue, type StatusesOf } from '../../core/errors.ts';

// The codes of identity: login codes, sign-in and sign-up, password and verification links, credentials.

export const identityCatalogue = defineCatalogue({
  CODE_INVALID: { status: 400, message: 'That login code is not valid.' },
  CODE_USED: { status: 400, message: 'That login code has already been used.' },
  CODE_EXPIRED: { status: 400, message: 'That login code has expired; mint a new one.' },
  WEAK_PASSWORD: { status: 400, message: 'Passwords need 10 to 200 characters.' },
  LINK_INVALID: { status: 400, message: 'That link is not valid any more; ask for a new one.' },
  SIGNIN_FAILED: { status: 401, message: 'The e-mail or password is not right.' },
  SIGNUP_DISABLED: { status: 403, message: 'Sign-up is turned off on this Pier.' },
  CSRF_INVALID: { status: 403, message: 'This request needs the x-csrf-token header of your session.' },
  USER_NOT_FOUND: { status: 404, message: 'User not found.' },
  CREDENTIAL_NOT_FOUND: { status: 404, message: 'Credential not found.' },
  SIGNUP_FAILED: {
    status: 409,
    message: 'An account could not be created with that e-mail; try signing in.',
  },
});

declare module '../../core/errors.ts' {
  interface ErrorCodes extends StatusesOf<typeof identityCatalogue> {}
}

const error = identityCatalogue.error;

export const identityErrors = {
  codeInvalid: () => error('CODE_INVALID'),
  codeUsed: () => error('CODE_USED'),
  codeExpired: () => error('CODE_EXPIRED'),
  codeVerifierMismatch: () =>
    error('CODE_INVALID', 'That login code needs the code verifier of the login that asked for it.'),
  userNotFound: (email?: string) =>
    error('USER_NOT_FOUND', email ? `No user has the e-mail ${email}.` : undefined),
  credentialNotFound: () => error('CREDENTIAL_NOT_FOUND'),
  signInFailed: () => error('SIGNIN_FAILED'),
  signUpDisabled: () => error('SIGNUP_DISABLED'),
  signUpFailed: () => error('SIGNUP_FAILED'),
  weakPassword: () => error('WEAK_PASSWORD'),
  csrfInvalid: () => error('CSRF_INVALID'),
  linkInvalid: () => error('LINK_INVALID'),
  verifyOtherAccount: () =>
    error(
      'LINK_INVALID',
      'This link verifies another account: sign in as the account that asked for it, then open it again.',
    ),
} as const;
