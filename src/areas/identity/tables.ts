import { index, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

// The dashboard's own tables. user_id points at platform's users table; no foreign key, because each
// area's migrations are generated alone (docs/decisions/001-migrations-per-area.md). Rows of a deleted
// user are harmless: they resolve to no user.

/** Browser sessions: the cookie holds a random secret; only its HMAC is stored. */
export const sessions = pgTable(
  'dashboard_sessions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    secretHash: text('secret_hash').notNull(),
    userId: uuid('user_id').notNull(),
    ip: text('ip'),
    userAgent: text('user_agent'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('dashboard_sessions_hash_uq').on(t.secretHash),
    index('dashboard_sessions_user_idx').on(t.userId),
  ],
);

/** One-time links that let a user set (or reset) a password: invitations and operator links. */
export const passwordLinks = pgTable(
  'dashboard_password_links',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tokenHash: text('token_hash').notNull(),
    userId: uuid('user_id').notNull(),
    purpose: text('purpose').$type<'invite' | 'operator'>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('dashboard_password_links_hash_uq').on(t.tokenHash)],
);
