import crypto from 'node:crypto';
import { and, asc, count, eq } from 'drizzle-orm';
import { blobErrors } from '../../core/blobs/errors.ts';
import { isUuid } from '../../core/ids.ts';
import type { Deps } from '../../deps.ts';
import type { CdnScope } from './assets.ts';
import { cdnErrors } from './errors.ts';
import { cdnUrlKeys } from './tables.ts';

// Keys an app signs its own transform URLs with, as imgproxy and Bunny's token authentication do: one API call
// makes a key, then every variant URL is built offline. The signature is
// base64url(HMAC-SHA-256(secret, "<assetId>?<query up to &sig=>")), with `key=<keyId>` inside the query, so
// the exact bytes the app wrote are what is checked (no canonical ordering to reproduce). A key signs only its
// own organization environment's assets (decision 120).

const MAX_KEYS = 10;

const scoped = (s: CdnScope) => and(eq(cdnUrlKeys.orgId, s.orgId), eq(cdnUrlKeys.environment, s.environment));

type KeyRow = typeof cdnUrlKeys.$inferSelect;
const out = (r: KeyRow) => ({ keyId: r.id, label: r.label, createdAt: r.createdAt.toISOString() });

export async function createUrlKey(deps: Deps, s: CdnScope, label?: string) {
  const [n] = await deps.db.orm.select({ n: count() }).from(cdnUrlKeys).where(scoped(s));
  if ((n?.n ?? 0) >= MAX_KEYS) throw cdnErrors.urlKeyLimit();
  const secret = `cdnk_${crypto.randomBytes(32).toString('base64url')}`;
  const [row] = await deps.db.orm
    .insert(cdnUrlKeys)
    .values({
      ...s,
      label: label ?? null,
      secretEnc: deps.keyring.encrypt(secret),
      createdAt: deps.clock.now(),
    })
    .returning();
  return { ...out(row!), secret };
}

export async function listUrlKeys(deps: Deps, s: CdnScope) {
  const rows = await deps.db.orm
    .select()
    .from(cdnUrlKeys)
    .where(scoped(s))
    .orderBy(asc(cdnUrlKeys.createdAt));
  return { items: rows.map(out) };
}

export async function deleteUrlKey(deps: Deps, s: CdnScope, keyId: string) {
  if (!isUuid(keyId)) throw cdnErrors.urlKeyNotFound();
  const gone = await deps.db.orm
    .delete(cdnUrlKeys)
    .where(and(scoped(s), eq(cdnUrlKeys.id, keyId)))
    .returning({ id: cdnUrlKeys.id });
  if (gone.length === 0) throw cdnErrors.urlKeyNotFound();
  return { success: true as const };
}

/** What an app computes: the signature of `<assetId>?<query>`. Exported for the docs' example and tests. */
export function signWithUrlKey(secret: string, assetId: string, query: string): string {
  return crypto.createHmac('sha256', secret).update(`${assetId}?${query}`).digest('base64url');
}

/**
 * Checks an app-signed URL: the key must belong to the asset's organization environment. Any failure is the
 * same 403, so a key id of another tenant tells nothing.
 */
export async function verifyUrlKeySignature(
  deps: Deps,
  assetId: string,
  keyId: string,
  signed: string,
  sig: string,
): Promise<void> {
  if (!isUuid(keyId)) throw blobErrors.signatureInvalid();
  const { rows } = await deps.db.query<{ secret_enc: string }>(
    `SELECT k.secret_enc FROM cdn_url_keys k JOIN cdn_assets a
       ON a.org_id = k.org_id AND a.environment = k.environment
     WHERE a.id = $1 AND k.id = $2`,
    [assetId, keyId],
  );
  if (!rows[0]) throw blobErrors.signatureInvalid();
  const want = Buffer.from(signWithUrlKey(deps.keyring.decrypt(rows[0].secret_enc), assetId, signed));
  const got = Buffer.from(sig);
  if (want.length !== got.length || !crypto.timingSafeEqual(want, got)) throw blobErrors.signatureInvalid();
}
