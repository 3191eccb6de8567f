import { and, asc, count, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { audit } from '../../core/audit/audit.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { MANAGERS, projectForUser, requireRole } from './access.ts';
import { orgsErrors } from './errors.ts';
import { PLANS } from './plans.ts';
import { slugInput } from './schema.ts';
import { emitChanged, isProtectedKey, MAX_SECRET_BYTES, validKey } from './secrets.ts';
import { projects, secrets } from './tables.ts';

export const setSecretForCli = defineFn({
  name: 'setSecretForCli',
  minRole: 'manager',
  summary:
    'Creates or replaces one secret of a project (owner or admin). The value is encrypted at rest. Stricter than the contract: a key is at most 256 characters (INVALID_KEY).',
  auth: { kind: 'user' },
  input: z.strictObject({ projectSlug: slugInput, key: z.string(), value: z.string() }),
  output: z.object({ ok: z.literal(true), key: z.string() }),
  errors: ['PROJECT_NOT_FOUND', 'INVALID_KEY', 'PROTECTED_KEY', 'INVALID_VALUE', 'QUOTA_EXCEEDED'],
  handler: async ({ deps, caller }, { projectSlug, key, value }) => {
    const { project, org, role } = await projectForUser(deps, caller.userId, projectSlug);
    requireRole(role, MANAGERS);
    if (!validKey(key)) throw orgsErrors.invalidKey();
    if (isProtectedKey(key)) throw orgsErrors.protectedKey(key);
    const bytes = Buffer.byteLength(value, 'utf8');
    if (bytes < 1 || bytes > MAX_SECRET_BYTES) throw orgsErrors.invalidValue();
    const limit = PLANS[org.plan].secretsPerProject;
    const now = deps.clock.now();
    const valueEnc = deps.keyring.encrypt(value);
    await deps.db.orm.transaction(async (tx) => {
      // The project row lock serialises concurrent writers so the quota check cannot be raced past.
      await tx.execute(sql`select id from ${projects} where ${projects.id} = ${project.id} for update`);
      const [existing] = await tx
        .select({ key: secrets.key })
        .from(secrets)
        .where(and(eq(secrets.projectId, project.id), eq(secrets.key, key)));
      if (!existing) {
        const [{ n }] = (await tx
          .select({ n: count() })
          .from(secrets)
          .where(eq(secrets.projectId, project.id))) as [{ n: number }];
        if (Number(n) >= limit)
          throw orgsErrors.quotaExceeded(`The ${org.plan} plan allows ${limit} secrets per project.`);
      }
      await tx
        .insert(secrets)
        .values({ projectId: project.id, key, valueEnc, createdAt: now, updatedAt: now })
        .onConflictDoUpdate({ target: [secrets.projectId, secrets.key], set: { valueEnc, updatedAt: now } });
    });
    await audit(deps, { kind: 'user', id: caller.userId }, 'secret.set', org.id, {
      project: project.slug,
      key,
    });
    emitChanged(deps, project.id);
    return { ok: true as const, key };
  },
});

export const removeSecretForCli = defineFn({
  name: 'removeSecretForCli',
  minRole: 'manager',
  summary: 'Removes one secret of a project (owner or admin); removed says whether it existed.',
  auth: { kind: 'user' },
  input: z.strictObject({ projectSlug: slugInput, key: z.string() }),
  output: z.object({ ok: z.literal(true), key: z.string(), removed: z.boolean() }),
  errors: ['PROJECT_NOT_FOUND', 'INVALID_KEY'],
  handler: async ({ deps, caller }, { projectSlug, key }) => {
    const { project, org, role } = await projectForUser(deps, caller.userId, projectSlug);
    requireRole(role, MANAGERS);
    if (!validKey(key)) throw orgsErrors.invalidKey();
    const gone = await deps.db.orm
      .delete(secrets)
      .where(and(eq(secrets.projectId, project.id), eq(secrets.key, key)))
      .returning({ key: secrets.key });
    if (gone.length) {
      await audit(deps, { kind: 'user', id: caller.userId }, 'secret.remove', org.id, {
        project: project.slug,
        key,
      });
      emitChanged(deps, project.id);
    }
    return { ok: true as const, key, removed: gone.length > 0 };
  },
});

export const listSecretsForCli = defineFn({
  name: 'listSecretsForCli',
  summary: "A project's secret keys with their update times; values are write-only and never returned.",
  auth: { kind: 'user' },
  input: z.strictObject({ projectSlug: slugInput }),
  output: z.array(z.object({ key: z.string(), updatedAt: z.string() })),
  errors: ['PROJECT_NOT_FOUND'],
  handler: async ({ deps, caller }, { projectSlug }) => {
    const { project } = await projectForUser(deps, caller.userId, projectSlug);
    const rows = await deps.db.orm
      .select({ key: secrets.key, updatedAt: secrets.updatedAt })
      .from(secrets)
      .where(eq(secrets.projectId, project.id))
      .orderBy(asc(secrets.key));
    return rows.map((r) => ({ key: r.key, updatedAt: r.updatedAt.toISOString() }));
  },
});
