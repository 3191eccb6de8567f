import { index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

// Every credential kind lives here: only an HMAC of the secret part is stored, found by keyId.
export const credentials = pgTable(
  'credentials',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    kind: text('kind').$type<CredentialKind>().notNull(),
    keyId: text('key_id').notNull(),
    secretHash: text('secret_hash').notNull(),
    userId: uuid('user_id'),
    orgId: uuid('org_id'),
    scopes: text('scopes').array().notNull().default([]),
    label: text('label').notNull().default(''),
    meta: jsonb('meta').$type<Record<string, unknown>>().notNull().default({}),
    /** A v1 API key's own token bucket (null: its organization's plan, or the default). */
    rateLimit: jsonb('rate_limit').$type<{ perSec: number; burst: number }>(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('credentials_key_id_uq').on(t.keyId), index('credentials_user_idx').on(t.userId)],
);

// mcpat: an OAuth access token for the MCP endpoint (src/areas/oauth); its grant lives in meta.
export type CredentialKind = 'pk' | 'plat' | 'op' | 'sk_live' | 'sk_test' | 'mcpat';
