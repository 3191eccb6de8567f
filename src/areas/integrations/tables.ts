import {
  bigserial,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

// Integrations' tables (migration set 'integrations'). A connection belongs to the organization and
// environment of the API key that created it; every query filters on both.
//
// Secrets: the tokens are one keyring-encrypted JSON blob (`tokens_enc`); the OAuth state is stored only as
// its HMAC (`state_hash`), and the PKCE verifier encrypted. Nothing here is readable without the master key.

export type ConnectionStatus = 'connected' | 'error' | 'expired';

const ts = (name: string) => timestamp(name, { withTimezone: true });

export const integrationConnections = pgTable(
  'integration_connections',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    environment: text('environment').$type<'production' | 'sandbox'>().notNull(),
    connectorSlug: text('connector_slug').notNull(),
    endUserId: text('end_user_id').notNull(),
    redirectUrl: text('redirect_url'),
    status: text('status').$type<ConnectionStatus>().notNull(),
    /** Why the connection is not `connected` (the provider's refusal, made safe), null when it is. */
    statusReason: text('status_reason'),
    externalAccountId: text('external_account_id'),
    externalAccountName: text('external_account_name'),
    tokensEnc: text('tokens_enc'),
    tokenExpiresAt: ts('token_expires_at'),
    /** When the current access token was issued: with its expiry, its lifetime (refresh at 75 % of it). */
    tokenIssuedAt: ts('token_issued_at'),
    /** The connection's variables (a subdomain, a region) that fill the provider's URL templates. */
    connectionConfig: jsonb('connection_config').$type<Record<string, string>>().notNull().default({}),
    /** Transient refresh failures in a row, and when the schedule may try again (back-off). */
    refreshFailures: integer('refresh_failures').notNull().default(0),
    refreshRetryAt: ts('refresh_retry_at'),
    /** Pending authorization: HMAC of the state sent to the provider, its expiry and the PKCE verifier. */
    stateHash: text('state_hash'),
    stateExpiresAt: ts('state_expires_at'),
    pkceVerifierEnc: text('pkce_verifier_enc'),
    /** One refresh at a time per connection across workers: whoever sets this lease refreshes. */
    refreshLeaseUntil: ts('refresh_lease_until'),
    /** Provider facts needed to call it (Salesforce's instance URL), not secret. */
    providerMeta: jsonb('provider_meta').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    lastUsedAt: ts('last_used_at'),
  },
  (t) => [
    index('integration_connections_scope_idx').on(t.orgId, t.environment, t.createdAt),
    uniqueIndex('integration_connections_state_idx').on(t.stateHash),
    index('integration_connections_expiry_idx').on(t.tokenExpiresAt),
  ],
);

/**
 * Where an organization's environment hears about its connections (connection.created, .refresh_failed,
 * .recovered, .deleted): a URL and the Standard Webhooks secret its deliveries are signed with (encrypted).
 */
export const integrationWebhookSettings = pgTable(
  'integration_webhook_settings',
  {
    orgId: uuid('org_id').notNull(),
    environment: text('environment').$type<'production' | 'sandbox'>().notNull(),
    url: text('url').notNull(),
    secretEnc: text('secret_enc').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.environment] })],
);

/**
 * Verification tokens a provider sent unsigned to its webhook URL (Notion's one-time `verification_token`),
 * encrypted, for the operator to read with `pier admin integrations webhook-tokens` (never logged). The URL
 * is public, so a row says only that something arrived there: it is never trusted to verify anything.
 */
export const integrationProviderWebhookTokens = pgTable(
  'integration_provider_webhook_tokens',
  {
    /** Arrival order (two may arrive in the same millisecond). */
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    connectorSlug: text('connector_slug').notNull(),
    tokenEnc: text('token_enc').notNull(),
    receivedAt: ts('received_at').notNull(),
  },
  (t) => [index('integration_provider_webhook_tokens_idx').on(t.connectorSlug, t.id)],
);
