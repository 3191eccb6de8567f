import crypto from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import type { Clock } from '../clock.ts';
import { type Keyring, randomBase62, safeEqual } from '../crypto.ts';
import type { Db } from '../db/client.ts';
import type { Caller } from './caller.ts';
import { formatCredential, parseCredential } from './format.ts';
import { type CredentialKind, credentials } from './tables.ts';

export type CredentialRow = typeof credentials.$inferSelect;

export type IssueInput = {
  kind: CredentialKind;
  label: string;
  userId?: string;
  orgId?: string;
  scopes?: string[];
  expiresAt?: Date;
  meta?: Record<string, unknown>;
};

const LAST_USED_THROTTLE_MS = 60_000;
const CACHE_TTL_MS = 30_000;

/**
 * Issues, resolves and revokes credentials. Resolution is cached per process for speed; a revocation
 * clears the entry here and, through the invalidation bus, on every other node before it returns.
 */
export class CredentialService {
  readonly #db: Db;
  readonly #keyring: Keyring;
  readonly #clock: Clock;
  readonly #cache = new Map<string, { row: CredentialRow; at: number }>();
  readonly #pendingTouch = new Set<string>();
  /** Tells other processes to drop a revoked credential from their caches (set by startBackground). */
  broadcastRevoke: (keyId: string) => Promise<void> = async () => {};

  constructor(db: Db, keyring: Keyring, clock: Clock) {
    this.#db = db;
    this.#keyring = keyring;
    this.#clock = clock;
  }

  async issue(input: IssueInput): Promise<{ token: string; row: CredentialRow }> {
    const keyId = randomBase62(16);
    const secret = crypto.randomBytes(32).toString('base64url');
    const [row] = await this.#db.orm
      .insert(credentials)
      .values({
        kind: input.kind,
        keyId,
        secretHash: this.#keyring.hashSecret(secret),
        userId: input.userId,
        orgId: input.orgId,
        scopes: input.scopes ?? [],
        label: input.label,
        expiresAt: input.expiresAt,
        meta: input.meta ?? {},
        createdAt: this.#clock.now(),
      })
      .returning();
    return { token: formatCredential(input.kind, keyId, secret), row: row! };
  }

  /** Returns the live credential row for a bearer value, or null (unknown, malformed, revoked, expired). */
  async verify(bearer: string): Promise<CredentialRow | null> {
    const parsed = parseCredential(bearer);
    if (!parsed) return null;
    const now = this.#clock.now();
    let row = this.#cached(parsed.keyId, now.getTime());
    if (!row) {
      const [found] = await this.#db.orm
        .select()
        .from(credentials)
        .where(eq(credentials.keyId, parsed.keyId));
      if (!found) return null;
      row = found;
      this.#cache.set(parsed.keyId, { row, at: now.getTime() });
    }
    if (row.kind !== parsed.kind) return null;
    if (!safeEqual(row.secretHash, this.#keyring.hashSecret(parsed.secret))) return null;
    if (row.revokedAt) return null;
    if (row.expiresAt && row.expiresAt.getTime() <= now.getTime()) return null;
    this.#touch(row, now);
    return row;
  }

  async revoke(id: string): Promise<CredentialRow | null> {
    const [row] = await this.#db.orm
      .update(credentials)
      .set({ revokedAt: this.#clock.now() })
      .where(and(eq(credentials.id, id), isNull(credentials.revokedAt)))
      .returning();
    if (row) {
      this.forget(row.keyId);
      await this.broadcastRevoke(row.keyId).catch(() => {});
    }
    return row ?? null;
  }

  /** Drops a cached entry (called locally and by the invalidation bus for other nodes' revocations). */
  forget(keyId: string): void {
    this.#cache.delete(keyId);
  }

  forgetAll(): void {
    this.#cache.clear();
  }

  #cached(keyId: string, nowMs: number): CredentialRow | null {
    const hit = this.#cache.get(keyId);
    if (!hit) return null;
    if (nowMs - hit.at > CACHE_TTL_MS) {
      this.#cache.delete(keyId);
      return null;
    }
    return hit.row;
  }

  // lastUsedAt is written at most once a minute per credential, off the request path.
  #touch(row: CredentialRow, now: Date): void {
    if (row.lastUsedAt && now.getTime() - row.lastUsedAt.getTime() < LAST_USED_THROTTLE_MS) return;
    if (this.#pendingTouch.has(row.id)) return;
    row.lastUsedAt = now;
    this.#pendingTouch.add(row.id);
    this.#db.orm
      .update(credentials)
      .set({ lastUsedAt: now })
      .where(eq(credentials.id, row.id))
      .catch(() => {})
      .finally(() => this.#pendingTouch.delete(row.id));
  }
}

export function callerFromRow(row: CredentialRow): Caller {
  switch (row.kind) {
    case 'pk':
      return {
        kind: 'user',
        userId: row.userId!,
        credentialId: row.id,
        via: 'token',
        label: row.label,
        createdAt: row.createdAt,
      };
    case 'plat':
      return { kind: 'platform', credentialId: row.id, keyId: row.keyId, scopes: row.scopes };
    case 'op':
      return { kind: 'operator', credentialId: row.id, keyId: row.keyId };
    case 'sk_live':
    case 'sk_test':
      return {
        kind: 'apikey',
        credentialId: row.id,
        keyId: row.keyId,
        orgId: row.orgId!,
        environment: row.kind === 'sk_live' ? 'production' : 'sandbox',
      };
  }
}
