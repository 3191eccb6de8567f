import { and, desc, eq, inArray, isNull } from 'drizzle-orm';
import { z } from 'zod';
import { audit } from '../../core/audit/audit.ts';
import { credentials } from '../../core/auth/tables.ts';
import { errors } from '../../core/errors.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { MANAGERS, orgForUser, requireRole } from './access.ts';
import {
  createdKeySchema,
  issueApiKey,
  keyKind,
  kindSchema,
  labelInput,
  rateLimitInput,
  rateLimitOutput,
} from './api-keys.ts';
import { orgsErrors } from './errors.ts';
import { slugInput } from './schema.ts';
import { orgs } from './tables.ts';

export const createApiKeyForCli = defineFn({
  name: 'createApiKeyForCli',
  minRole: 'manager',
  summary: 'Creates a v1 API key for an organization (owner or admin); the key is shown once.',
  auth: { kind: 'user' },
  input: z.strictObject({
    orgSlug: slugInput,
    kind: kindSchema,
    label: labelInput.optional(),
    rateLimit: rateLimitInput.optional(),
  }),
  output: createdKeySchema,
  errors: ['ORG_NOT_FOUND', 'FORBIDDEN'],
  handler: async ({ deps, caller }, input) => {
    const { org, role } = await orgForUser(deps, caller.userId, input.orgSlug);
    requireRole(role, MANAGERS);
    const { token, row } = await issueApiKey(deps, org.id, input.kind, input.label, input.rateLimit);
    await audit(deps, { kind: 'user', id: caller.userId }, 'api-key.create', org.id, {
      keyId: row.keyId,
      kind: input.kind,
      ...(row.rateLimit ? { rateLimit: row.rateLimit } : {}),
    });
    return {
      key: token,
      keyId: row.keyId,
      kind: input.kind,
      label: row.label,
      createdAt: row.createdAt.toISOString(),
      rateLimit: row.rateLimit ?? null,
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
      /** null: the organization's plan's limit (docs/v1-api.md, "Rate limits"). */
      rateLimit: rateLimitOutput,
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
      rateLimit: r.rateLimit ?? null,
    }));
  },
});

export const updateApiKeyForCli = defineFn({
  name: 'updateApiKeyForCli',
  minRole: 'manager',
  summary:
    "Sets an API key's label or its own v1 rate limit (owner or admin); rateLimit null returns it to the plan's.",
  auth: { kind: 'user' },
  input: z.strictObject({
    orgSlug: slugInput,
    keyId: z.string().min(1).max(64),
    label: labelInput.optional(),
    rateLimit: rateLimitInput.nullable().optional(),
  }),
  output: z.object({ keyId: z.string(), label: z.string(), rateLimit: rateLimitOutput }),
  errors: ['ORG_NOT_FOUND', 'API_KEY_NOT_FOUND', 'FORBIDDEN', 'VALIDATION_ERROR'],
  handler: async ({ deps, caller }, input) => {
    const { org, role } = await orgForUser(deps, caller.userId, input.orgSlug);
    requireRole(role, MANAGERS);
    if (input.label === undefined && input.rateLimit === undefined)
      throw errors.validation('Give label or rateLimit (null clears the limit).');
    const [row] = await deps.db.orm
      .update(credentials)
      .set({
        ...(input.label !== undefined ? { label: input.label } : {}),
        ...(input.rateLimit !== undefined ? { rateLimit: input.rateLimit } : {}),
      })
      .where(liveKeyOf(org.id, input.keyId))
      .returning();
    if (!row) throw orgsErrors.apiKeyNotFound(input.keyId);
    // Every node reads the key again on its next request, so the new limit applies at once everywhere.
    await deps.credentials.changed(row.keyId);
    await audit(deps, { kind: 'user', id: caller.userId }, 'api-key.update', org.id, {
      keyId: row.keyId,
      ...(input.label !== undefined ? { label: row.label } : {}),
      ...(input.rateLimit !== undefined ? { rateLimit: row.rateLimit } : {}),
    });
    return { keyId: row.keyId, label: row.label, rateLimit: row.rateLimit ?? null };
  },
});

function liveKeyOf(orgId: string, keyId: string) {
  return and(
    eq(credentials.keyId, keyId),
    eq(credentials.orgId, orgId),
    inArray(credentials.kind, ['sk_live', 'sk_test']),
    isNull(credentials.revokedAt),
  );
}

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
    const [row] = await deps.db.orm.select().from(credentials).where(liveKeyOf(org.id, input.keyId));
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
  input: z.strictObject({
    orgSlug: slugInput,
    kind: kindSchema,
    label: labelInput.optional(),
    rateLimit: rateLimitInput.optional(),
  }),
  output: z.object({ key: z.string(), keyId: z.string() }),
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const [org] = await deps.db.orm.select().from(orgs).where(eq(orgs.slug, input.orgSlug));
    if (!org) throw orgsErrors.orgNotFound(input.orgSlug);
    const { token, row } = await issueApiKey(deps, org.id, input.kind, input.label, input.rateLimit);
    await audit(deps, { kind: 'operator', id: caller.keyId }, 'api-key.create', org.id, {
      keyId: row.keyId,
      kind: input.kind,
      ...(row.rateLimit ? { rateLimit: row.rateLimit } : {}),
    });
    return { key: token, keyId: row.keyId };
  },
});
