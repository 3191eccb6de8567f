import { index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

// The OAuth 2.1 authorization server in front of /mcp. user_id points at the platform's users table with no
// foreign key (each area's migrations are generated alone, docs/decisions/001-migrations-per-area.md).
// Access tokens are rows of the core credentials table (kind 'mcpat'), so every credential check, cache
// and revocation applies to them; only refresh tokens, codes and client secrets live here, as HMACs.

/** Clients registered by Dynamic Client Registration (RFC 7591). CIMD clients are fetched, not stored. */
export const oauthClients = pgTable(
  'oauth_clients',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    clientId: text('client_id').notNull(),
    name: text('name').notNull(),
    redirectUris: text('redirect_uris').array().notNull(),
    /** 'none' (public client, PKCE only), 'client_secret_post' or 'client_secret_basic'. */
    authMethod: text('auth_method').notNull(),
    secretHash: text('secret_hash'),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    registeredFrom: text('registered_from'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [uniqueIndex('oauth_clients_client_id_uq').on(t.clientId)],
);

/**
 * One authorization request, from GET /authorize to the code's redemption: what the client asked for,
 * where the request came from (shown on the consent page), then the user's decision and the code's HMAC.
 */
export const oauthRequests = pgTable(
  'oauth_requests',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    clientId: text('client_id').notNull(),
    clientName: text('client_name').notNull(),
    /** 'dcr' or 'cimd' (client id metadata document). */
    clientKind: text('client_kind').notNull(),
    redirectUri: text('redirect_uri').notNull(),
    codeChallenge: text('code_challenge').notNull(),
    state: text('state'),
    resource: text('resource').notNull(),
    scope: text('scope').notNull(),
    sourceIp: text('source_ip'),
    userAgent: text('user_agent'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    userId: uuid('user_id'),
    orgIds: text('org_ids').array().notNull().default([]),
    environment: text('environment').$type<'sandbox' | 'production'>().notNull().default('sandbox'),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
    codeHash: text('code_hash'),
    codeExpiresAt: timestamp('code_expires_at', { withTimezone: true }),
    usedAt: timestamp('used_at', { withTimezone: true }),
    /** The grant the code became (a replayed code revokes it). */
    grantId: uuid('grant_id'),
  },
  (t) => [uniqueIndex('oauth_requests_code_uq').on(t.codeHash)],
);

/** What a user granted a client: listed on the tokens page, revoked there. */
export const oauthGrants = pgTable(
  'oauth_grants',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id').notNull(),
    clientId: text('client_id').notNull(),
    clientName: text('client_name').notNull(),
    redirectUri: text('redirect_uri').notNull(),
    audience: text('audience').notNull(),
    scope: text('scope').notNull(),
    orgIds: text('org_ids').array().notNull(),
    environment: text('environment').$type<'sandbox' | 'production'>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    refreshedAt: timestamp('refreshed_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [index('oauth_grants_user_idx').on(t.userId)],
);

/** Refresh tokens: single use (each refresh rotates it); a reused one revokes its whole grant. */
export const oauthRefreshTokens = pgTable(
  'oauth_refresh_tokens',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    grantId: uuid('grant_id').notNull(),
    tokenHash: text('token_hash').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('oauth_refresh_tokens_hash_uq').on(t.tokenHash),
    index('oauth_refresh_grant_idx').on(t.grantId),
  ],
);
