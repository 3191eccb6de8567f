import crypto from 'node:crypto';
import { and, eq, lt } from 'drizzle-orm';
import { z } from 'zod';
import { isUniqueViolation } from '../core/db/pg-errors.ts';
import { errors } from '../core/errors.ts';
import { defineJob } from '../core/jobs.ts';
import { v1Idempotency } from '../core/v1-tables.ts';
import type { Deps } from '../deps.ts';
import type { ApiKeyCaller } from './v1-kit.ts';

// Idempotency-Key on POST (as Stripe and Resend do): the first request with a key claims it; a retry with
// the same key and the same body within 24 h gets the first response again (header Idempotent-Replayed);
// the same key with another body is 409 IDEMPOTENCY_CONFLICT. Keys belong to an organization and
// environment. Server errors (5xx) release the key so a retry can run again.

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A claim whose request never finished (process died) is taken over after this long. */
const STALE_CLAIM_MS = 60_000;
const KEY_RE = /^[\x21-\x7e]{1,255}$/;

export type Claim = { orgId: string; environment: string; key: string };
export type Replay = { status: number; contentType: string; body: string };

/** Key-order independent JSON, so `{a,b}` and `{b,a}` are the same body. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

export function requestHash(method: string, url: string, body: unknown): string {
  return crypto
    .createHash('sha256')
    .update(`${method} ${url}\n${canonical(body ?? null)}`)
    .digest('hex');
}

/**
 * Claims the key for this request, or returns the stored first response to replay.
 * Throws IDEMPOTENCY_CONFLICT (other body) or IDEMPOTENCY_IN_PROGRESS (first request still running).
 */
export async function claimOrReplay(
  deps: Deps,
  caller: ApiKeyCaller,
  key: string,
  hash: string,
): Promise<{ claim: Claim } | { replay: Replay }> {
  if (!KEY_RE.test(key)) throw errors.invalidIdempotencyKey();
  const claim = { orgId: caller.orgId, environment: caller.environment, key };
  const where = and(
    eq(v1Idempotency.orgId, claim.orgId),
    eq(v1Idempotency.environment, claim.environment),
    eq(v1Idempotency.key, key),
  );
  for (let attempt = 0; attempt < 3; attempt++) {
    const now = deps.clock.now();
    try {
      await deps.db.orm.insert(v1Idempotency).values({ ...claim, requestHash: hash, createdAt: now });
      return { claim };
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
    const [row] = await deps.db.orm.select().from(v1Idempotency).where(where);
    if (!row) continue; // released meanwhile
    const age = now.getTime() - row.createdAt.getTime();
    if (age >= IDEMPOTENCY_TTL_MS) {
      await deps.db.orm.delete(v1Idempotency).where(and(where, eq(v1Idempotency.createdAt, row.createdAt)));
      continue;
    }
    if (row.requestHash !== hash) throw errors.idempotencyConflict();
    if (row.status === null) {
      if (age < STALE_CLAIM_MS) throw errors.idempotencyInProgress();
      await deps.db.orm.delete(v1Idempotency).where(and(where, eq(v1Idempotency.createdAt, row.createdAt)));
      continue;
    }
    return {
      replay: {
        status: row.status,
        contentType: row.contentType ?? 'application/json; charset=utf-8',
        body: row.response ?? '',
      },
    };
  }
  throw errors.idempotencyInProgress();
}

/** Stores the first response (below 500) or releases the key (5xx) so a retry runs again. */
export async function settle(
  deps: Deps,
  claim: Claim,
  status: number,
  contentType: string | undefined,
  body: string,
): Promise<void> {
  const where = and(
    eq(v1Idempotency.orgId, claim.orgId),
    eq(v1Idempotency.environment, claim.environment),
    eq(v1Idempotency.key, claim.key),
  );
  if (status >= 500) {
    await deps.db.orm.delete(v1Idempotency).where(where);
    return;
  }
  await deps.db.orm
    .update(v1Idempotency)
    .set({ status, contentType: contentType ?? null, response: body })
    .where(where);
}

/** Drops records past the 24 h window (run periodically; lookups ignore them anyway). */
export async function pruneIdempotency(deps: Deps): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - IDEMPOTENCY_TTL_MS);
  const rows = await deps.db.orm
    .delete(v1Idempotency)
    .where(lt(v1Idempotency.createdAt, cutoff))
    .returning({ key: v1Idempotency.key });
  return rows.length;
}

export const IDEMPOTENCY_PRUNE_CRON = '23 * * * *';

/** Hourly (background.ts): deletes Idempotency-Key records past their 24 h window. */
export const pruneIdempotencyJob = defineJob({
  name: 'v1.idempotency.prune',
  cronOnly: true,
  schema: z.object({}),
  handle: async (_data, { deps }: { deps: Deps }) => {
    await pruneIdempotency(deps);
  },
});
