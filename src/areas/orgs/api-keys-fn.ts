import { and, desc, eq, inArray, isNull } from 'drizzle-orm';
import { z } from 'zod';
import { audit } from '../../core/audit/audit.ts';
import { credentials } from '../../core/auth/tables.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { MANAGERS, orgForUser, requireRole } from './access.ts';
import { createdKeySchema, issueApiKey, keyKind, kindSchema, labelInput } from './api-keys.ts';
import { orgsErrors } from './errors.ts';
import { slugInput } from './schema.ts';
import { orgs } from './tables.ts';

export const createApiKeyForCli = defineFn({
  name: 'createApiKeyForCli',
  minRole: 'manager',
  summary: 'Creates a v1 API key for an organization (owner or admin); the key is shown once.',
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput, kind: kindSchema, label: labelInput.optional() }),
  output: createdKeySchema,
  errors: ['ORG_NOT_FOUND', 'FORBIDDEN'],
  handler: async ({ deps, caller }, input) => {
    const { org, role } = await orgForUser(deps, caller.userId, input.orgSlug);
    requireRole(role, MANAGERS);
    const { token, row } = await issueApiKey(deps, org.id, input.kind, input.label);
    await audit(deps, { kind: 'user', id: caller.userId }, 'api-key.create', org.id, {
      keyId: row.keyId,
      kind: input.kind,
    });
    return {
      key: token,
      keyId: row.keyId,
      kind: input.kind,
      label: row.label,
      createdAt: row.createdAt.toISOString(),
    };
  },
});

export const listApiKeysForCli = defineFn({
  name: 'listApiKeysForCli',
  summary: "Lists an organization's API keys that are not revoked (any member; secrets are never shown).",
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput }),
  output: z.array(
    z.object({
      keyId: z.string(),
      kind: kindSchema,
      label: z.string(),
      createdAt: z.string(),
      lastUsedAt: z.string().nullable(),
      expiresAt: z.string().nullable(),
    }),
  ),
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const { org } = await orgForUser(deps, caller.userId, input.orgSlug);
    const rows = await deps.db.orm
      .select()
      .from(credentials)
      .where(
        and(
          eq(credentials.orgId, org.id),
          inArray(credentials.kind, ['sk_live', 'sk_test']),
          isNull(credentials.revokedAt),
        ),
      )
      .orderBy(desc(credentials.createdAt));
    return rows.map((r) => ({
      keyId: r.keyId,
      kind: keyKind(r.kind),
      label: r.label,
      createdAt: r.createdAt.toISOString(),
      lastUsedAt: r.lastUsedAt?.toISOString() ?? null,
      expiresAt: r.expiresAt?.toISOString() ?? null,
    }));
  },
});

export const revokeApiKeyForCli = defineFn({
  name: 'revokeApiKeyForCli',
  minRole: 'manager',
  summary: 'Revokes an API key of an organization (owner or admin); it stops working at once.',
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput, keyId: z.string().min(1).max(64) }),
  output: z.object({ ok: z.literal(true), keyId: z.string() }),
  errors: ['ORG_NOT_FOUND', 'API_KEY_NOT_FOUND', 'FORBIDDEN'],
  handler: async ({ deps, caller }, input) => {
    const { org, role } = await orgForUser(deps, caller.userId, input.orgSlug);
    requireRole(role, MANAGERS);
    const [row] = await deps.db.orm
      .select()
      .from(credentials)
      .where(
        and(
          eq(credentials.keyId, input.keyId),
          eq(credentials.orgId, org.id),
          inArray(credentials.kind, ['sk_live', 'sk_test']),
          isNull(credentials.revokedAt),
        ),
      );
    if (!row) throw orgsErrors.apiKeyNotFound(input.keyId);
    await deps.credentials.revoke(row.id);
    await audit(deps, { kind: 'user', id: caller.userId }, 'api-key.revoke', org.id, { keyId: row.keyId });
    return { ok: true as const, keyId: row.keyId };
  },
});

export const adminCreateApiKey = defineFn({
  name: 'adminCreateApiKey',
  summary: 'Creates a v1 API key for an organization (operator); the key is shown once.',
  auth: { kind: 'operator' },
  input: z.strictObject({ orgSlug: slugInput, kind: kindSchema, label: labelInput.optional() }),
  output: z.object({ key: z.string(), keyId: z.string() }),
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const [org] = await deps.db.orm.select().from(orgs).where(eq(orgs.slug, input.orgSlug));
    if (!org) throw orgsErrors.orgNotFound(input.orgSlug);
    const { token, row } = await issueApiKey(deps, org.id, input.kind, input.label);
    await audit(deps, { kind: 'operator', id: caller.keyId }, 'api-key.create', org.id, {
      keyId: row.keyId,
      kind: input.kind,
    });
    return { key: token, keyId: row.keyId };
  },
});
