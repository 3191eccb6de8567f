import { and, asc, eq } from 'drizzle-orm';
import { z } from 'zod';
import { PROVIDERS, platformProvider } from '../../core/ai/providers.ts';
import { audit } from '../../core/audit/audit.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { findOrgById, MANAGERS, orgForUser, orgsErrors, requireRole, slugInput } from '../orgs/index.ts';
import { resolveModelFor, vendorInput } from './models.ts';
import { modelProviderKeys } from './tables.ts';

export const setModelProviderKeyForCli = defineFn({
  name: 'setModelProviderKeyForCli',
  minRole: 'manager',
  summary:
    "Stores the organization's own key for a model vendor (owner or admin); encrypted at rest, never returned.",
  auth: { kind: 'user' },
  input: z.strictObject({
    orgSlug: slugInput,
    provider: vendorInput,
    apiKey: z.string().trim().min(8).max(4096),
  }),
  output: z.object({ ok: z.literal(true), provider: z.string() }),
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, { orgSlug, provider, apiKey }) => {
    const { org, role } = await orgForUser(deps, caller.userId, orgSlug);
    requireRole(role, MANAGERS);
    const now = deps.clock.now();
    const keyEnc = deps.keyring.encrypt(apiKey);
    await deps.db.orm
      .insert(modelProviderKeys)
      .values({ orgId: org.id, provider, keyEnc, createdAt: now, updatedAt: now })
      .onConflictDoUpdate({
        target: [modelProviderKeys.orgId, modelProviderKeys.provider],
        set: { keyEnc, updatedAt: now },
      });
    await audit(deps, { kind: 'user', id: caller.userId }, 'model.key.set', org.id, { provider });
    return { ok: true as const, provider };
  },
});

export const removeModelProviderKeyForCli = defineFn({
  name: 'removeModelProviderKeyForCli',
  minRole: 'manager',
  summary:
    "Removes the organization's own key for a model vendor (owner or admin); removed says whether it existed.",
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput, provider: vendorInput }),
  output: z.object({ ok: z.literal(true), provider: z.string(), removed: z.boolean() }),
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, { orgSlug, provider }) => {
    const { org, role } = await orgForUser(deps, caller.userId, orgSlug);
    requireRole(role, MANAGERS);
    const gone = await deps.db.orm
      .delete(modelProviderKeys)
      .where(and(eq(modelProviderKeys.orgId, org.id), eq(modelProviderKeys.provider, provider)))
      .returning({ provider: modelProviderKeys.provider });
    if (gone.length)
      await audit(deps, { kind: 'user', id: caller.userId }, 'model.key.remove', org.id, { provider });
    return { ok: true as const, provider, removed: gone.length > 0 };
  },
});

export const listModelProvidersForCli = defineFn({
  name: 'listModelProvidersForCli',
  summary:
    'Each model provider and whether the organization or the platform has a key for it; never any key material.',
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput }),
  output: z.array(
    z.object({
      provider: z.string(),
      organizationKey: z.boolean(),
      platformKey: z.boolean(),
      updatedAt: z.string().nullable(),
    }),
  ),
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, { orgSlug }) => {
    const { org } = await orgForUser(deps, caller.userId, orgSlug);
    const rows = await deps.db.orm
      .select({ provider: modelProviderKeys.provider, updatedAt: modelProviderKeys.updatedAt })
      .from(modelProviderKeys)
      .where(eq(modelProviderKeys.orgId, org.id))
      .orderBy(asc(modelProviderKeys.provider));
    const own = new Map(rows.map((r) => [r.provider, r.updatedAt]));
    return PROVIDERS.map((provider) => ({
      provider,
      organizationKey: own.has(provider),
      platformKey: platformProvider(deps.config.models, provider) !== null,
      updatedAt: own.get(provider)?.toISOString() ?? null,
    }));
  },
});

export const resolveModel = defineFn({
  name: 'resolveModel',
  summary:
    "Which provider serves an (organization, model) pair, with the organization's key or the platform's. Scope model.resolve.",
  auth: { kind: 'platform', scope: 'model.resolve' },
  input: z.strictObject({ orgId: z.string().max(64), model: z.string().min(1).max(200) }),
  output: z.object({
    provider: z.enum(PROVIDERS),
    model: z.string(),
    baseUrl: z.string(),
    apiKey: z.string(),
    keySource: z.enum(['organization', 'platform']),
  }),
  errors: ['ORG_NOT_FOUND', 'MODEL_NOT_AVAILABLE', 'INVALID_MODEL'],
  handler: async ({ deps, caller }, { orgId, model }) => {
    const org = await findOrgById(deps, orgId);
    if (!org) throw orgsErrors.orgNotFound();
    const actor = { kind: 'platform', id: caller.keyId };
    try {
      const r = await resolveModelFor(deps, org.id, model);
      await audit(deps, actor, 'model.resolve', org.id, {
        model,
        provider: r.provider,
        keySource: r.keySource,
      });
      return r;
    } catch (err) {
      await audit(deps, actor, 'model.resolve', org.id, {
        model,
        outcome: (err as { code?: string }).code ?? 'error',
      });
      throw err;
    }
  },
});
