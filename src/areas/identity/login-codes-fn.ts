import { and, eq, isNull } from 'drizzle-orm';
import { z } from 'zod';
import { defineFn } from '../../http/fn-kit.ts';
import { loginCodes } from './account-tables.ts';
import { claimByProof } from './email-verification.ts';
import { identityErrors } from './errors.ts';
import { mintLoginCode, normalizeCode, pkceChallenge } from './login-codes.ts';
import { userSchema } from './schema.ts';
import { issuePersonalToken } from './tokens.ts';
import { getUser } from './users.ts';

export const exchangeCliAuthCode = defineFn({
  name: 'exchangeCliAuthCode',
  summary: 'Redeems a single-use login code for a new personal token. Takes no bearer token.',
  auth: { kind: 'none' },
  input: z.strictObject({
    // No length bound here: the contract answers CODE_INVALID for any code that is not one (the body limit
    // bounds the work).
    code: z.string(),
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
    if (!/^[A-Z]{8}$/.test(raw)) throw await fail(identityErrors.codeInvalid());
    const [row] = await deps.db.orm
      .select()
      .from(loginCodes)
      .where(eq(loginCodes.codeHash, deps.keyring.hashSecret(raw)));
    if (!row) throw await fail(identityErrors.codeInvalid());
    if (row.codeChallenge) {
      if (!input.codeVerifier || pkceChallenge(input.codeVerifier) !== row.codeChallenge)
        throw await fail(identityErrors.codeVerifierMismatch());
    }
    if (row.usedAt) throw identityErrors.codeUsed();
    if (row.expiresAt.getTime() <= deps.clock.now().getTime()) throw identityErrors.codeExpired();
    // The conditional update is the single point of truth: of concurrent redemptions exactly one wins.
    const claimed = await deps.db.orm
      .update(loginCodes)
      .set({ usedAt: deps.clock.now() })
      .where(and(eq(loginCodes.id, row.id), isNull(loginCodes.usedAt)))
      .returning({ id: loginCodes.id });
    if (!claimed.length) throw identityErrors.codeUsed();
    const user = await getUser(deps, row.userId);
    if (!user) throw identityErrors.codeInvalid();
    // The operator minted this code for the address and handed it to its owner: redeeming it proves the
    // address (and claims an account nobody had proven, before the new token exists).
    if (row.meta.source === 'operator') await claimByProof(deps, user, undefined);
    const { token } = await issuePersonalToken(deps, user.id, row.label);
    return { token, label: row.label, user: { id: user.id, email: user.email } };
  },
});

export const createLoginCodeForCli = defineFn({
  name: 'createLoginCodeForCli',
  summary:
    'Mints a single-use login code for the caller: the hand-off card (no challenge) or the approval of a `pier login` browser flow (PKCE S256 challenge).',
  auth: { kind: 'user' },
  input: z.strictObject({
    label: z.string().trim().min(1).max(100).optional(),
    codeChallenge: z
      .string()
      .regex(/^[A-Za-z0-9_-]{43}$/, 'must be a base64url SHA-256 (S256) challenge')
      .optional(),
    device: z
      .strictObject({ label: z.string().max(200).optional(), ip: z.string().max(64).optional() })
      .optional(),
  }),
  output: z.object({ code: z.string(), expiresAt: z.string(), label: z.string() }),
  errors: [],
  handler: async ({ deps, caller, ip }, input) => {
    const stamp = deps.clock.now().toISOString().slice(0, 16).replace('T', ' ');
    const label = input.label ?? (input.device?.label ? `cli ${input.device.label}` : `cli ${stamp}`);
    const { code, expiresAt } = await mintLoginCode(deps, {
      userId: caller.userId,
      label,
      codeChallenge: input.codeChallenge,
      meta: {
        source: input.codeChallenge ? 'browser-flow' : 'hand-off',
        device: input.device ?? null,
        approvedFrom: ip,
      },
    });
    return { code, expiresAt: expiresAt.toISOString(), label };
  },
});
