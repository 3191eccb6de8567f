import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import { audit } from '../../core/audit/audit.ts';
import { PLATFORM_SCOPES } from '../../core/auth/caller.ts';
import { credentials } from '../../core/auth/tables.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { emailInput, ensureUser, identityErrors, mintLoginCode, userSchema } from '../identity/index.ts';
import { op, orgBySlug } from './admin.ts';
import { addMember, createOrg } from './orgs.ts';
import { roleSchema, slugInput } from './schema.ts';
import { orgs } from './tables.ts';

// Operator functions behind `pier admin …`; they need the operator key (op.…).

export const adminCreateUser = defineFn({
  name: 'adminCreateUser',
  summary: 'Creates a user by e-mail (idempotent).',
  auth: { kind: 'operator' },
  input: z.strictObject({ email: emailInput }),
  output: userSchema.extend({ created: z.boolean() }),
  errors: [],
  handler: async ({ deps }, { email }) => {
    const { user, created } = await ensureUser(deps, email);
    return { id: user.id, email: user.email, created };
  },
});

export const adminCreateOrg = defineFn({
  name: 'adminCreateOrg',
  summary: 'Creates an organization owned by an existing or new user.',
  auth: { kind: 'operator' },
  input: z.strictObject({ slug: slugInput, name: z.string().trim().min(1).max(200), ownerEmail: emailInput }),
  output: z.object({
    id: z.string(),
    slug: z.string(),
    name: z.string(),
    plan: z.string(),
    owner: userSchema,
  }),
  errors: ['INVALID_SLUG', 'SLUG_TAKEN'],
  handler: async ({ deps, caller }, input) => {
    const { user } = await ensureUser(deps, input.ownerEmail);
    const org = await createOrg(deps, { slug: input.slug, name: input.name, ownerUserId: user.id });
    await audit(deps, op(caller), 'org.create', org.id, { slug: org.slug });
    return {
      id: org.id,
      slug: org.slug,
      name: org.name,
      plan: org.plan,
      owner: { id: user.id, email: user.email },
    };
  },
});

export const adminAddMember = defineFn({
  name: 'adminAddMember',
  summary: "Adds a user to an organization, or changes the member's role.",
  auth: { kind: 'operator' },
  input: z.strictObject({ orgSlug: slugInput, email: emailInput, role: roleSchema }),
  output: z.object({ orgSlug: z.string(), email: z.string(), role: roleSchema }),
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const org = await orgBySlug(deps, input.orgSlug);
    const { user } = await ensureUser(deps, input.email);
    await addMember(deps, org.id, user.id, input.role);
    await audit(deps, op(caller), 'member.add', org.id, { userId: user.id, role: input.role });
    return { orgSlug: org.slug, email: user.email, role: input.role };
  },
});

export const adminSetPlan = defineFn({
  name: 'adminSetPlan',
  summary: "Sets an organization's plan.",
  auth: { kind: 'operator' },
  input: z.strictObject({ orgSlug: slugInput, plan: z.enum(['free', 'pro']) }),
  output: z.object({ orgSlug: z.string(), plan: z.enum(['free', 'pro']) }),
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const org = await orgBySlug(deps, input.orgSlug);
    await deps.db.orm.update(orgs).set({ plan: input.plan }).where(eq(orgs.id, org.id));
    await audit(deps, op(caller), 'plan.set', org.id, { plan: input.plan });
    return { orgSlug: org.slug, plan: input.plan };
  },
});

export const adminCreateLoginCode = defineFn({
  name: 'adminCreateLoginCode',
  summary: 'Mints a login code for a user (created if new), as the dashboard hand-off card does.',
  auth: { kind: 'operator' },
  input: z.strictObject({ email: emailInput, label: z.string().trim().min(1).max(100).optional() }),
  output: z.object({ code: z.string(), expiresAt: z.string() }),
  errors: [],
  handler: async ({ deps }, input) => {
    const { user } = await ensureUser(deps, input.email);
    const label = input.label ?? `cli ${deps.clock.now().toISOString().slice(0, 16).replace('T', ' ')}`;
    const { code, expiresAt } = await mintLoginCode(deps, {
      userId: user.id,
      label,
      meta: { source: 'operator' },
    });
    return { code, expiresAt: expiresAt.toISOString() };
  },
});

export const adminCreatePlatformCredential = defineFn({
  name: 'adminCreatePlatformCredential',
  summary: 'Issues a platform credential with named scopes; the credential is shown once.',
  auth: { kind: 'operator' },
  input: z.strictObject({
    scopes: z.array(z.enum(PLATFORM_SCOPES)).min(1).max(PLATFORM_SCOPES.length),
    label: z.string().trim().min(1).max(100).optional(),
  }),
  output: z.object({ credential: z.string(), keyId: z.string(), scopes: z.array(z.string()) }),
  errors: [],
  handler: async ({ deps, caller }, input) => {
    const scopes = [...new Set(input.scopes)].sort();
    const { token, row } = await deps.credentials.issue({
      kind: 'plat',
      scopes,
      label: input.label ?? `platform ${scopes.join(',')}`,
    });
    await audit(deps, op(caller), 'platform-credential.create', null, { keyId: row.keyId, scopes });
    return { credential: token, keyId: row.keyId, scopes };
  },
});

export const adminRevokePlatformCredential = defineFn({
  name: 'adminRevokePlatformCredential',
  summary: 'Revokes a platform credential by key id; it stops working at once.',
  auth: { kind: 'operator' },
  input: z.strictObject({ keyId: z.string().min(1).max(64) }),
  output: z.object({ ok: z.literal(true), keyId: z.string() }),
  errors: ['CREDENTIAL_NOT_FOUND'],
  handler: async ({ deps, caller }, { keyId }) => {
    const [row] = await deps.db.orm
      .select()
      .from(credentials)
      .where(and(eq(credentials.keyId, keyId), eq(credentials.kind, 'plat')));
    if (!row) throw identityErrors.credentialNotFound();
    await deps.credentials.revoke(row.id);
    await audit(deps, op(caller), 'platform-credential.revoke', null, { keyId });
    return { ok: true as const, keyId };
  },
});
