import { and, desc, eq, isNull } from 'drizzle-orm';
import { z } from 'zod';
import { audit } from '../../core/audit/audit.ts';
import { credentials } from '../../core/auth/tables.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { keyIdInput, label, ownToken, tokenItem } from './personal-tokens.ts';
import { issuePersonalToken } from './tokens.ts';

export const createTokenForCli = defineFn({
  name: 'createTokenForCli',
  summary: 'Mints a personal token for the caller; the token is shown once. The label defaults to the time.',
  auth: { kind: 'user' },
  input: z.strictObject({ label: label.optional() }),
  output: z.object({ token: z.string(), keyId: z.string(), label: z.string(), createdAt: z.string() }),
  errors: [],
  handler: async ({ deps, caller }, input) => {
    const stamp = deps.clock.now().toISOString().slice(0, 16).replace('T', ' ');
    const { token, row } = await issuePersonalToken(deps, caller.userId, input.label ?? `dashboard ${stamp}`);
    await audit(deps, { kind: 'user', id: caller.userId }, 'token.create', null, { keyId: row.keyId });
    return { token, keyId: row.keyId, label: row.label, createdAt: row.createdAt.toISOString() };
  },
});

export const listTokensForCli = defineFn({
  name: 'listTokensForCli',
  summary: "The caller's live personal tokens (newest first), without their secrets.",
  auth: { kind: 'user' },
  input: z.strictObject({}),
  output: z.array(tokenItem),
  errors: [],
  handler: async ({ deps, caller }) => {
    const rows = await deps.db.orm
      .select()
      .from(credentials)
      .where(
        and(eq(credentials.kind, 'pk'), eq(credentials.userId, caller.userId), isNull(credentials.revokedAt)),
      )
      .orderBy(desc(credentials.createdAt));
    const now = deps.clock.now().getTime();
    return rows
      .filter((r) => !r.expiresAt || r.expiresAt.getTime() > now)
      .map((r) => ({
        keyId: r.keyId,
        label: r.label,
        createdAt: r.createdAt.toISOString(),
        lastUsedAt: r.lastUsedAt?.toISOString() ?? null,
        expiresAt: r.expiresAt?.toISOString() ?? null,
        current: r.id === caller.credentialId,
      }));
  },
});

export const updateTokenLabelForCli = defineFn({
  name: 'updateTokenLabelForCli',
  summary: "Renames one of the caller's personal tokens.",
  auth: { kind: 'user' },
  input: z.strictObject({ keyId: keyIdInput, label }),
  output: z.object({ ok: z.literal(true), keyId: z.string(), label: z.string() }),
  errors: ['CREDENTIAL_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const row = await ownToken(deps, caller.userId, input.keyId);
    await deps.db.orm.update(credentials).set({ label: input.label }).where(eq(credentials.id, row.id));
    deps.credentials.forget(row.keyId);
    return { ok: true as const, keyId: row.keyId, label: input.label };
  },
});

export const revokeTokenByIdForCli = defineFn({
  name: 'revokeTokenByIdForCli',
  summary: "Revokes one of the caller's personal tokens by key id; it stops working at once.",
  auth: { kind: 'user' },
  input: z.strictObject({ keyId: keyIdInput }),
  output: z.object({ ok: z.literal(true), keyId: z.string() }),
  errors: ['CREDENTIAL_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const row = await ownToken(deps, caller.userId, input.keyId);
    await deps.credentials.revoke(row.id);
    await audit(deps, { kind: 'user', id: caller.userId }, 'token.revoke', null, { keyId: row.keyId });
    return { ok: true as const, keyId: row.keyId };
  },
});
