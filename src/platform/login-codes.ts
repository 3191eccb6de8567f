import crypto from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import { z } from 'zod';
import { errors } from '../core/errors.ts';
import type { Deps } from '../deps.ts';
import { defineFn } from './fn-kit.ts';
import { userSchema } from './schemas.ts';
import { loginCodes } from './tables.ts';
import { issuePersonalToken } from './tokens.ts';
import { getUser } from './users.ts';

// 20 consonants without vowels or look-alikes: no words, no 0/O or 1/I confusion.
const ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const LOGIN_CODE_TTL_MS = 5 * 60 * 1000;

export function normalizeCode(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, '');
}

export function formatCode(raw: string): string {
  return `${raw.slice(0, 4)}-${raw.slice(4)}`;
}

function randomCode(): string {
  let out = '';
  while (out.length < 8) {
    for (const b of crypto.randomBytes(16)) if (b < 240 && out.length < 8) out += ALPHABET[b % 20];
  }
  return out;
}

export function pkceChallenge(verifier: string): string {
  return crypto.createHash('sha256').update(verifier).digest('base64url');
}

/** Mints a single-use login code for a user (hand-off card, operator, or the CLI's PKCE browser flow). */
export async function mintLoginCode(
  deps: Deps,
  input: { userId: string; label: string; codeChallenge?: string; meta?: Record<string, unknown> },
): Promise<{ code: string; expiresAt: Date }> {
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + LOGIN_CODE_TTL_MS);
  for (;;) {
    const raw = randomCode();
    const inserted = await deps.db.orm
      .insert(loginCodes)
      .values({
        codeHash: deps.keyring.hashSecret(raw),
        userId: input.userId,
        label: input.label,
        codeChallenge: input.codeChallenge,
        meta: input.meta ?? {},
        createdAt: now,
        expiresAt,
      })
      .onConflictDoNothing()
      .returning({ id: loginCodes.id });
    if (inserted.length) return { code: formatCode(raw), expiresAt };
  }
}

export const exchangeCliAuthCode = defineFn({
  name: 'exchangeCliAuthCode',
  summary: 'Redeems a single-use login code for a new personal token. Takes no bearer token.',
  auth: { kind: 'none' },
  input: z.strictObject({
    code: z.string().max(64),
    codeVerifier: z.string().min(43).max(128).optional(),
  }),
  output: z.object({ token: z.string(), label: z.string(), user: userSchema }),
  errors: ['CODE_INVALID', 'CODE_USED', 'CODE_EXPIRED', 'RATE_LIMITED'],
  handler: async ({ deps, ip }, input) => {
    const limitKey = `login-code-fail:${ip}`;
    await deps.limiter.assertUnder(limitKey, deps.limits.loginCodeFailures);
    const fail = async (err: Error) => {
      await deps.limiter.hit(limitKey, deps.limits.loginCodeFailures);
      return err;
    };
    const raw = normalizeCode(input.code);
    if (!/^[A-Z]{8}$/.test(raw)) throw await fail(errors.codeInvalid());
    const [row] = await deps.db.orm
      .select()
      .from(loginCodes)
      .where(eq(loginCodes.codeHash, deps.keyring.hashSecret(raw)));
    if (!row) throw await fail(errors.codeInvalid());
    if (row.codeChallenge) {
      if (!input.codeVerifier || pkceChallenge(input.codeVerifier) !== row.codeChallenge)
        throw await fail(errors.codeVerifierMismatch());
    }
    if (row.usedAt) throw errors.codeUsed();
    if (row.expiresAt.getTime() <= deps.clock.now().getTime()) throw errors.codeExpired();
    // The conditional update is the single point of truth: of concurrent redemptions exactly one wins.
    const claimed = await deps.db.orm
      .update(loginCodes)
      .set({ usedAt: deps.clock.now() })
      .where(and(eq(loginCodes.id, row.id), isNull(loginCodes.usedAt)))
      .returning({ id: loginCodes.id });
    if (!claimed.length) throw errors.codeUsed();
    const user = await getUser(deps, row.userId);
    if (!user) throw errors.codeInvalid();
    const { token } = await issuePersonalToken(deps, user.id, row.label);
    return { token, label: row.label, user: { id: user.id, email: user.email } };
  },
});
