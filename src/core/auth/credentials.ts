import crypto from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import type { Clock } from '../clock.ts';
import { type Keyring, randomBase62, safeEqual } from '../crypto.ts';
import type { Db } from '../db/client.ts';
import type { Caller, OAuthGrant } from './caller.ts';
import { formatCredential, type ParsedCredential, parseCredential } from './format.ts';
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
  rateLimit?: { perSec: number; burst: number } | null;
};

const LAST_USED_THROTTLE_MS = 60_000;
const CACHE_TTL_MS = 30_000;
/** Authorization header values remembered at most (only ones that verified); more clears them all. */
const MAX_HEADERS = 10_000;

/** A credential that passed verification, with the caller it stands for (one object, reused per request). */
export type VerifiedCredential = { row: CredentialRow; caller: Caller };

type CacheEntry = {
  row: CredentialRow;
  at: number;
  /** SHA-256 of the secret last verified against the stored HMAC; lets a repeated token skip the HMAC. */
  digest?: Buffer;
  verified?: VerifiedCredential;
};

/** A verified Authorization header value: valid while its keyId's cache entry is the one it was verified in. */
type HeaderEntry = { keyId: string; entry: CacheEntry; verified: VerifiedCredential };

function sha256(secret: string): Buffer {
  return crypto.hash('sha256', secret, 'buffer');
}

/**
 * Issues, resolves and revokes credentials. Resolution is cached per process for speed; a revocation
 * clears the entry here and, through the invalidation bus, on every other node before it returns.
 */
export class CredentialService {
  readonly #db: Db;
  readonly #keyring: Keyring;
  readonly #clock: Clock;
  readonly #cache = new Map<string, CacheEntry>();
  /**
   * Whole Authorization header values that verified, so a repeated request costs one Map lookup (no
   * parsing, no SHA-256). They hold the credential in plaintext, in this process's memory only, never
   * logged, for at most CACHE_TTL_MS; revocation drops them with their keyId's entry (decision 080).
   */
  readonly #byHeader = new Map<string, HeaderEntry>();
  #headersSweptAt = 0;
  readonly #pendingTouch = new Set<string>();
  /** False while revocations from other nodes may be missed (their listener is down): no cache at all. */
  #trusted = true;
  /** Bumped by every forget: a database read that raced a revocation must not cache what it read. */
  #generation = 0;
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
        rateLimit: input.rateLimit ?? null,
        createdAt: this.#clock.now(),
      })
      .returning();
    return { token: formatCredential(input.kind, keyId, secret), row: row! };
  }

  /** Returns the live credential row for a bearer value, or null (unknown, malformed, revoked, expired). */
  async verify(bearer: string): Promise<CredentialRow | null> {
    return (await this.verifyCaller(bearer))?.row ?? null;
  }

  /** Like verify, with the caller the credential stands for. */
  async verifyCaller(bearer: string): Promise<VerifiedCredential | null> {
    const parsed = parseCredential(bearer);
    if (!parsed) return null;
    const now = this.#clock.nowMs();
    const fast = this.#fromCache(parsed, now);
    if (fast !== undefined) return fast;
    let entry = this.#entry(parsed.keyId, now);
    if (!entry) {
      const generation = this.#generation;
      const [found] = await this.#db.orm
        .select()
        .from(credentials)
        .where(eq(credentials.keyId, parsed.keyId));
      if (!found) return null;
      entry = { row: found, at: now };
      if (this.#trusted && generation === this.#generation) this.#cache.set(parsed.keyId, entry);
    }
    const row = entry.row;
    if (row.kind !== parsed.kind) return null;
    if (!safeEqual(row.secretHash, this.#keyring.hashSecret(parsed.secret))) return null;
    // Remembered only after the HMAC matched: the digest stands for "this exact secret was verified".
    entry.digest = sha256(parsed.secret);
    entry.verified ??= { row, caller: callerFromRow(row) };
    return this.#live(entry.verified, now);
  }

  /**
   * The hot path, synchronous: a credential verified before and still cached answers without the HMAC or
   * the database. undefined means "not decidable from the cache" (call verifyCaller).
   */
  verifyCached(bearer: string): VerifiedCredential | null | undefined {
    const parsed = parseCredential(bearer);
    if (!parsed) return null;
    return this.#fromCache(parsed, this.#clock.nowMs());
  }

  /**
   * The hottest path: an Authorization header value remembered by rememberHeader. undefined means "not
   * decidable from it" (parse the bearer and call verifyCached or verifyCaller).
   */
  verifyHeaderCached(header: string): VerifiedCredential | null | undefined {
    const hit = this.#byHeader.get(header);
    if (!hit) return undefined;
    const now = this.#clock.nowMs();
    // Revocation (forget), expiry of the keyId's entry and an untrusted cache all end the keyId's entry.
    if (this.#entry(hit.keyId, now) !== hit.entry) {
      this.#byHeader.delete(header);
      return undefined;
    }
    return this.#live(hit.verified, now);
  }

  /** Remembers the header a credential was just verified from (verifyCached or verifyCaller answered v). */
  rememberHeader(header: string, v: VerifiedCredential): void {
    if (!this.#trusted) return;
    const keyId = v.row.keyId;
    const entry = this.#cache.get(keyId);
    // Not cached (a read that raced a revocation) or verified from another entry: nothing to tie it to.
    if (!entry || entry.verified !== v) return;
    const now = this.#clock.nowMs();
    if (now - this.#headersSweptAt > CACHE_TTL_MS) this.#sweepHeaders(now);
    if (this.#byHeader.size >= MAX_HEADERS) this.#byHeader.clear();
    this.#byHeader.set(header, { keyId, entry, verified: v });
  }

  /** Drops remembered headers whose entry has expired, so a secret does not outlive the cache's TTL. */
  #sweepHeaders(now: number): void {
    this.#headersSweptAt = now;
    for (const [header, h] of this.#byHeader) {
      if (this.#cache.get(h.keyId) !== h.entry || now - h.entry.at > CACHE_TTL_MS)
        this.#byHeader.delete(header);
    }
  }

  #fromCache(parsed: ParsedCredential, now: number): VerifiedCredential | null | undefined {
    if (!this.#trusted) return undefined;
    const entry = this.#entry(parsed.keyId, now);
    if (!entry?.digest || !entry.verified || entry.row.kind !== parsed.kind) return undefined;
    const digest = sha256(parsed.secret);
    // Constant time; a different secret for this keyId takes the full HMAC path.
    if (!crypto.timingSafeEqual(digest, entry.digest)) return undefined;
    return this.#live(entry.verified, now);
  }

  #live(v: VerifiedCredential, now: number): VerifiedCredential | null {
    const row = v.row;
    if (row.revokedAt) return null;
    if (row.expiresAt && row.expiresAt.getTime() <= now) return null;
    this.#touch(row, now);
    return v;
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
    this.#generation++;
    this.#cache.delete(keyId);
    for (const [header, h] of this.#byHeader) if (h.keyId === keyId) this.#byHeader.delete(header);
  }

  /** After a change to a credential's row: drops it here and on every other node, as a revocation does. */
  async changed(keyId: string): Promise<void> {
    this.forget(keyId);
    await this.broadcastRevoke(keyId).catch(() => {});
  }

  forgetAll(): void {
    this.#generation++;
    this.#cache.clear();
    this.#byHeader.clear();
  }

  /**
   * false: revocations from other nodes may be missed (the listener is down), so nothing is served from or
   * kept in the cache; true: listening again, starting from an empty cache.
   */
  trustCache(trusted: boolean): void {
    this.forgetAll();
    this.#trusted = trusted;
  }

  #entry(keyId: string, nowMs: number): CacheEntry | undefined {
    if (!this.#trusted) return undefined;
    const hit = this.#cache.get(keyId);
    if (!hit) return undefined;
    if (nowMs - hit.at > CACHE_TTL_MS) {
      this.#cache.delete(keyId);
      return undefined;
    }
    return hit;
  }

  // lastUsedAt is written at most once a minute per credential, off the request path.
  #touch(row: CredentialRow, now: number): void {
    if (row.lastUsedAt && now - row.lastUsedAt.getTime() < LAST_USED_THROTTLE_MS) return;
    if (this.#pendingTouch.has(row.id)) return;
    const at = new Date(now);
    row.lastUsedAt = at;
    this.#pendingTouch.add(row.id);
    this.#db.orm
      .update(credentials)
      .set({ lastUsedAt: at })
      .where(eq(credentials.id, row.id))
      .catch(() => {})
      .finally(() => this.#pendingTouch.delete(row.id));
  }
}

function oauthScopeFromMeta(meta: Record<string, unknown>): OAuthGrant {
  return {
    clientId: String(meta.clientId ?? ''),
    audience: String(meta.audience ?? ''),
    orgIds: Array.isArray(meta.orgIds) ? meta.orgIds.map(String) : [],
    environment: meta.environment === 'production' ? 'production' : 'sandbox',
  };
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
    case 'mcpat':
      return {
        kind: 'user',
        userId: row.userId!,
        credentialId: row.id,
        via: 'oauth',
        label: row.label,
        createdAt: row.createdAt,
        oauth: oauthScopeFromMeta(row.meta),
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
        ...(row.rateLimit ? { rateLimit: row.rateLimit } : {}),
      };
  }
}
