import { and, asc, eq } from 'drizzle-orm';
import type { Deps } from '../../../deps.ts';
import { buildSecrets } from './tables.ts';

// Which of a project's secrets reach its build (decision 108): the ones marked for it, and the ones whose name
// has a prefix the frameworks inline into the pages they build. All of them reach the running app.

/** Settings with these prefixes reach the build (the frameworks inline them into the pages); no others. */
export const BUILD_ENV_PREFIXES = ['VITE_', 'PUBLIC_', 'NEXT_PUBLIC_', 'NUXT_PUBLIC_'] as const;

export const hasBuildPrefix = (key: string) => BUILD_ENV_PREFIXES.some((p) => key.startsWith(p));

/** The build's share of the project's secrets: the prefixed names and the marked ones. */
export function buildTimeEnv(
  secrets: Record<string, string>,
  marked: ReadonlySet<string> = new Set(),
): Record<string, string> {
  return Object.fromEntries(Object.entries(secrets).filter(([k]) => hasBuildPrefix(k) || marked.has(k)));
}

export async function markedBuildKeys(deps: Deps, projectId: string): Promise<Set<string>> {
  const rows = await deps.db.orm
    .select({ key: buildSecrets.key })
    .from(buildSecrets)
    .where(eq(buildSecrets.projectId, projectId))
    .orderBy(asc(buildSecrets.key));
  return new Set(rows.map((r) => r.key));
}

/** Marks or unmarks one existing secret; false when the project has no secret of that name. */
export async function setBuildMark(
  deps: Deps,
  projectId: string,
  key: string,
  build: boolean,
): Promise<void> {
  if (build) await deps.db.orm.insert(buildSecrets).values({ projectId, key }).onConflictDoNothing();
  else
    await deps.db.orm
      .delete(buildSecrets)
      .where(and(eq(buildSecrets.projectId, projectId), eq(buildSecrets.key, key)));
}
