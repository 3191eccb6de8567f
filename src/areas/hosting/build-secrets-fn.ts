import { and, asc, eq } from 'drizzle-orm';
import { z } from 'zod';
import { audit } from '../../core/audit/audit.ts';
import { defineFn } from '../../http/fn-kit.ts';
import {
  MANAGERS,
  orgsErrors,
  projectForUser,
  requireRole,
  secrets,
  slugInput,
  validKey,
} from '../orgs/index.ts';
import { hostingErrors } from './errors.ts';
import { hasBuildPrefix, markedBuildKeys, setBuildMark } from './runtime/build-secrets.ts';

// The build flag on secrets (decision 108): `pier secrets set KEY --build`, the dashboard's Build toggle.
// The secret itself (its value) stays the orgs area's; this marks which of them the next build sees.

export const setSecretBuildForCli = defineFn({
  name: 'setSecretBuildForCli',
  minRole: 'manager',
  summary:
    "Marks one of the project's secrets for the build (or unmarks it): marked secrets, and VITE_/PUBLIC_/NEXT_PUBLIC_/NUXT_PUBLIC_ ones, are in the next builds' environment. Owner or admin.",
  auth: { kind: 'user' },
  input: z.strictObject({ projectSlug: slugInput, key: z.string(), build: z.boolean() }),
  output: z.object({ ok: z.literal(true), key: z.string(), build: z.boolean(), reachesBuild: z.boolean() }),
  errors: ['PROJECT_NOT_FOUND', 'INVALID_KEY', 'SECRET_NOT_FOUND'],
  handler: async ({ deps, caller }, { projectSlug, key, build }) => {
    const { project, org, role } = await projectForUser(deps, caller.userId, projectSlug);
    requireRole(role, MANAGERS);
    if (!validKey(key)) throw orgsErrors.invalidKey();
    const [row] = await deps.db.orm
      .select({ key: secrets.key })
      .from(secrets)
      .where(and(eq(secrets.projectId, project.id), eq(secrets.key, key)));
    if (!row) throw hostingErrors.secretNotFound(key, project.slug);
    await setBuildMark(deps, project.id, key, build);
    await audit(
      deps,
      { kind: 'user', id: caller.userId },
      build ? 'secret.build.mark' : 'secret.build.unmark',
      org.id,
      {
        project: project.slug,
        key,
      },
    );
    return { ok: true as const, key, build, reachesBuild: build || hasBuildPrefix(key) };
  },
});

export const listBuildSecretsForCli = defineFn({
  name: 'listBuildSecretsForCli',
  summary:
    "Which of the project's secret names reach its build, and why: `marked` (the build flag) or `prefix` (a public prefix). Names only.",
  auth: { kind: 'user' },
  input: z.strictObject({ projectSlug: slugInput }),
  output: z.array(z.object({ key: z.string(), marked: z.boolean(), prefix: z.boolean() })),
  errors: ['PROJECT_NOT_FOUND'],
  handler: async ({ deps, caller }, { projectSlug }) => {
    const { project } = await projectForUser(deps, caller.userId, projectSlug);
    const marked = await markedBuildKeys(deps, project.id);
    const rows = await deps.db.orm
      .select({ key: secrets.key })
      .from(secrets)
      .where(eq(secrets.projectId, project.id))
      .orderBy(asc(secrets.key));
    return rows
      .map((r) => ({ key: r.key, marked: marked.has(r.key), prefix: hasBuildPrefix(r.key) }))
      .filter((r) => r.marked || r.prefix);
  },
});
