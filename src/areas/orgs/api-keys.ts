import { z } from 'zod';
import type { Deps } from '../../deps.ts';

// API keys for the v1 REST API: `sk_live.…` acts in the organization's production environment,
// `sk_test.…` in its sandbox. They live in the one credentials table (kind sk_live / sk_test, orgId set);
// the full key is returned once, only its hash is stored.

export const kindSchema = z.enum(['live', 'test']);
type KeyKind = z.infer<typeof kindSchema>;
export const labelInput = z.string().trim().min(1).max(100);
/** A key's own v1 token bucket; the same bounds as V1_RATE_LIMIT_PER_SEC / _BURST. */
export const rateLimitInput = z.strictObject({
  perSec: z.number().positive().max(100_000),
  burst: z.number().int().min(1).max(1_000_000),
});
export const rateLimitOutput = z.object({ perSec: z.number(), burst: z.number() }).nullable();
type RateLimit = z.infer<typeof rateLimitInput>;

const credentialKind = (k: KeyKind) => (k === 'live' ? 'sk_live' : 'sk_test');
export const keyKind = (k: string): KeyKind => (k === 'sk_live' ? 'live' : 'test');

export async function issueApiKey(
  deps: Deps,
  orgId: string,
  kind: KeyKind,
  label?: string,
  rateLimit?: RateLimit,
) {
  return deps.credentials.issue({
    kind: credentialKind(kind),
    orgId,
    label: label ?? `${kind} key`,
    rateLimit: rateLimit ?? null,
  });
}

export const createdKeySchema = z.object({
  key: z.string(),
  keyId: z.string(),
  kind: kindSchema,
  label: z.string(),
  createdAt: z.string(),
  rateLimit: rateLimitOutput,
});
