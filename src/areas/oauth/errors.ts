import { defineCatalogue, type StatusesOf } from '../../core/errors.ts';

// The codes of the consent functions of the OAuth server. The token and authorize endpoints answer in the
// OAuth protocol's own error format instead (oauth-error.ts).

export const oauthCatalogue = defineCatalogue({
  OAUTH_REQUEST_NOT_FOUND: {
    status: 404,
    message: 'The authorization request (it may have expired) was not found.',
  },
  OAUTH_GRANT_NOT_FOUND: { status: 404, message: 'The granted client was not found.' },
});

declare module '../../core/errors.ts' {
  interface ErrorCodes extends StatusesOf<typeof oauthCatalogue> {}
}

const error = oauthCatalogue.error;

export const oauthErrors = {
  requestNotFound: () => error('OAUTH_REQUEST_NOT_FOUND'),
  grantNotFound: () => error('OAUTH_GRANT_NOT_FOUND'),
} as const;
