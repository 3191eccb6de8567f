import { z } from 'zod';

// The schema of one provider in the catalogue (catalogue/*.json). Each entry says how to authenticate with the
// provider and how to reach its API; everything Pier needs for auth + passthrough. Unified mappers are code
// (connectors/<slug>.ts) and are joined to their entry by slug. Validated once, when the area loads: a bad
// entry stops start-up with the entry's slug and the field at fault.

export const CATEGORIES = [
  'crm',
  'storage',
  'communication',
  'productivity',
  'accounting',
  'ticketing',
  'ecommerce',
  'calendar',
  'marketing',
  'hris',
  'developer',
  'payments',
] as const;
export const UNIFIED_CATEGORIES = ['crm', 'storage', 'communication', 'productivity'] as const;

/** `{name}` placeholders in URLs: the connection's variables (a subdomain, a region). */
export const PLACEHOLDER = /\{([a-zA-Z][a-zA-Z0-9]*)\}/g;

const httpsTemplate = z
  .string()
  .max(500)
  .refine((s) => {
    try {
      const u = new URL(s.replace(PLACEHOLDER, 'x'));
      return u.protocol === 'https:' && !u.search && !u.hash && !u.username;
    } catch {
      return false;
    }
  }, 'must be an https URL (placeholders such as {subdomain} allowed), without query or fragment');

const headerName = z.string().regex(/^[a-z][a-z0-9-]*$/, 'lower-case header name');

/** Where a credential goes on every API call. `format` takes `{token}` (OAuth) or `{apiKey}` (API key). */
const placement = z.discriminatedUnion('in', [
  z.strictObject({ in: z.literal('header'), name: headerName, format: z.string().min(1).max(100) }),
  z.strictObject({ in: z.literal('query'), name: z.string().regex(/^[a-zA-Z_][\w.-]*$/) }),
]);
export type Placement = z.infer<typeof placement>;

const BEARER: Placement = { in: 'header', name: 'authorization', format: 'Bearer {token}' };

const oauth2 = z.strictObject({
  kind: z.literal('oauth2'),
  authorizeUrl: httpsTemplate,
  tokenUrl: httpsTemplate,
  /** RFC 7009 revocation endpoint (a `token=` form POST). */
  revokeUrl: httpsTemplate.optional(),
  scopes: z.array(z.string().min(1).max(300)).max(100).default([]),
  scopeSeparator: z.enum([' ', ',']).default(' '),
  /** The authorization parameter carrying the scopes (Slack bot scopes: `scope`; some: `scopes`). */
  scopeParam: z.string().min(1).max(50).default('scope'),
  pkce: z.boolean().default(false),
  /** How the client authenticates at the token endpoint: form fields, or HTTP Basic. */
  clientAuth: z.enum(['body', 'basic']).default('body'),
  tokenBody: z.enum(['form', 'json']).default('form'),
  /** Extra parameters of the authorization URL (`access_type=offline`, `audience=…`). */
  authParams: z.record(z.string(), z.string()).default({}),
  /** Where the access token goes on API calls (default `Authorization: Bearer …`). */
  tokenPlacement: placement.default(BEARER),
});

const apiKey = z.strictObject({
  kind: z.literal('api_key'),
  placement,
  /** What the end user is asked for on the Connect page. */
  label: z.string().min(1).max(100).default('API key'),
});

const basic = z.strictObject({
  kind: z.literal('basic'),
  usernameLabel: z.string().min(1).max(100).default('Username'),
  /** A label, or null where the provider takes the key as the user name and an empty (or fixed) password. */
  passwordLabel: z.string().min(1).max(100).nullable().default('Password'),
  /** The fixed password of a key-as-username scheme (Freshdesk's `X`); empty when null. */
  fixedPassword: z.string().max(20).optional(),
});

const variable = z.strictObject({
  label: z.string().min(1).max(100),
  /** What a value must match; it lands in a host name, so the default allows one DNS label only. */
  pattern: z.string().max(200).default('^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$'),
  example: z.string().max(100).optional(),
  default: z.string().max(100).optional(),
});

const pagination = z.strictObject({
  style: z.enum(['cursor', 'offset', 'page', 'page-token', 'link-header', 'has-more', 'none']),
  /** The request parameter carrying the position and the page size (documentation for passthrough users). */
  param: z.string().max(50).optional(),
  limitParam: z.string().max(50).optional(),
});

const rateLimit = z.strictObject({
  limit: headerName.optional(),
  remaining: headerName.optional(),
  reset: headerName.optional(),
  /** The provider sends Retry-After with its 429s. */
  retryAfter: z.boolean().default(true),
});

export const providerEntry = z
  .strictObject({
    slug: z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/),
    name: z.string().min(1).max(100),
    description: z.string().min(1).max(300),
    categories: z.array(z.enum(CATEGORIES)).min(1),
    logo: z.url({ protocol: /^https$/ }),
    docsUrl: z.url({ protocol: /^https$/ }),
    auth: z.discriminatedUnion('kind', [oauth2, apiKey, basic]),
    baseUrl: httpsTemplate,
    /** A second API host (Dropbox's content host). */
    contentUrl: httpsTemplate.optional(),
    variables: z.record(z.string().regex(/^[a-zA-Z][a-zA-Z0-9]*$/), variable).default({}),
    /** Headers every API call carries (`notion-version`). */
    headers: z.record(headerName, z.string().max(200)).default({}),
    pagination,
    rateLimit: rateLimit.optional(),
    /** Who the connection acts as: a GET whose JSON names the account (used after connecting and by /test). */
    account: z
      .strictObject({
        path: z.string().regex(/^\/[^?#\s]*$/),
        id: z.string().max(100),
        name: z.string().max(100).optional(),
      })
      .optional(),
  })
  .superRefine((e, ctx) => {
    const urls = [e.baseUrl, e.contentUrl];
    if (e.auth.kind === 'oauth2') urls.push(e.auth.authorizeUrl, e.auth.tokenUrl, e.auth.revokeUrl);
    for (const u of urls)
      for (const [, name] of (u ?? '').matchAll(PLACEHOLDER))
        if (!e.variables[name!])
          ctx.addIssue({
            code: 'custom',
            message: `{${name}} is used in a URL but not declared in variables`,
          });
    const p =
      e.auth.kind === 'oauth2' ? e.auth.tokenPlacement : e.auth.kind === 'api_key' ? e.auth.placement : null;
    const want = e.auth.kind === 'oauth2' ? '{token}' : '{apiKey}';
    if (p?.in === 'header' && !p.format.includes(want))
      ctx.addIssue({ code: 'custom', message: `auth placement format must contain ${want}` });
  });

export type ProviderEntry = z.infer<typeof providerEntry>;
export type ProviderCategory = (typeof CATEGORIES)[number];
export type UnifiedCategory = (typeof UNIFIED_CATEGORIES)[number];
