import { defineCatalogue, type StatusesOf } from '../../core/errors.ts';

// The codes of organizations, members, projects, their secrets, API keys and plans. ORG_NOT_FOUND and
// PROJECT_NOT_FOUND are thrown by other areas too, through `orgsErrors` from this area's index.

export const orgsCatalogue = defineCatalogue({
  INVALID_SLUG: { status: 400, message: 'That is not a valid slug: use 3–40 characters of a-z, 0-9 and -.' },
  INVALID_REGION: { status: 400, message: 'That region is not offered.' },
  INVALID_KEY: { status: 400, message: 'Secret keys must match ^[A-Z][A-Z0-9_]*$.' },
  PROTECTED_KEY: { status: 400, message: 'That key is reserved by the platform.' },
  INVALID_VALUE: { status: 400, message: 'Secret values must be 1 to 65536 bytes.' },
  QUOTA_EXCEEDED: { status: 400, message: "The organization's plan does not allow more." },
  EMAIL_NOT_VERIFIED: {
    status: 403,
    message: 'Verify your e-mail address first: open the link Pier sent you, or ask for a new one.',
  },
  ORG_NOT_FOUND: { status: 404, message: 'Organization not found.' },
  PROJECT_NOT_FOUND: { status: 404, message: 'Project not found.' },
  API_KEY_NOT_FOUND: { status: 404, message: 'API key not found.' },
  MEMBER_NOT_FOUND: { status: 404, message: 'That member was not found.' },
  SLUG_TAKEN: { status: 409, message: 'That slug is already taken.' },
  LAST_OWNER: {
    status: 409,
    message: 'An organization needs at least one owner; promote someone else first.',
  },
});

declare module '../../core/errors.ts' {
  interface ErrorCodes extends StatusesOf<typeof orgsCatalogue> {}
}

const error = orgsCatalogue.error;

export const orgsErrors = {
  orgNotFound: (slug?: string) =>
    error('ORG_NOT_FOUND', slug ? `Organization '${slug}' was not found.` : undefined),
  projectNotFound: (slug?: string) =>
    error('PROJECT_NOT_FOUND', slug ? `Project '${slug}' was not found.` : undefined),
  apiKeyNotFound: (keyId?: string) =>
    error('API_KEY_NOT_FOUND', keyId ? `API key '${keyId}' was not found.` : undefined),
  memberNotFound: () => error('MEMBER_NOT_FOUND'),
  emailNotVerified: () => error('EMAIL_NOT_VERIFIED'),
  slugTaken: (slug: string) => error('SLUG_TAKEN', `The slug '${slug}' is already taken.`),
  invalidSlug: (slug: string) =>
    error('INVALID_SLUG', `'${slug}' is not a valid slug: use 3–40 characters of a-z, 0-9 and -.`),
  invalidRegion: (region: string, regions: string[]) =>
    error('INVALID_REGION', `Region '${region}' is not offered; choose one of ${regions.join(', ')}.`),
  invalidKey: () => error('INVALID_KEY'),
  protectedKey: (key: string) => error('PROTECTED_KEY', `The key '${key}' is reserved by the platform.`),
  invalidValue: () => error('INVALID_VALUE'),
  quotaExceeded: (message: string) => error('QUOTA_EXCEEDED', message),
  lastOwner: () => error('LAST_OWNER'),
} as const;
