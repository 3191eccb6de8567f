import fs from 'node:fs';
import path from 'node:path';
import { desc, eq } from 'drizzle-orm';
import type { Deps } from '../../deps.ts';
import { projectDir } from './runtime/app-databases.ts';
import { deployments } from './runtime/tables.ts';

// Releases on disk: each deployment unpacks and builds into DATA_DIR/apps/<project>/releases/<deployment>, and
// the folders of the last KEEP_RELEASES builds that went live stay there, so a rollback runs one at once with
// no build. Older folders are pruned after every deploy; their artifacts stay, so `pier redeploy` rebuilds them.

/** Builds kept on disk per project: the live one and the ones live before it, newest first. */
export const KEEP_RELEASES = 5;

type Row = Pick<typeof deployments.$inferSelect, 'projectId' | 'id' | 'releaseId'>;

export function releaseDir(deps: Deps, projectId: string, deploymentId: string): string {
  return path.join(projectDir(deps, projectId), 'releases', deploymentId);
}

/** The folder a deployment runs from: its own, or — a rollback — the build of the one it rolled back to. */
export function releaseDirOf(deps: Deps, d: Row): string {
  return releaseDir(deps, d.projectId, d.releaseId ?? d.id);
}

/** Whether a deployment's build is still on disk (a rollback to it is instant). */
export function releaseKept(deps: Deps, d: Row & { manifest: unknown }): boolean {
  return Boolean(d.manifest) && fs.existsSync(releaseDirOf(deps, d));
}

const IN_USE = new Set(['uploading', 'building', 'starting', 'live', 'crashed']);

/** Removes the release folders of the project that are neither in use nor among the last KEEP_RELEASES live. */
export async function pruneReleases(deps: Deps, projectId: string): Promise<void> {
  const rows = await deps.db.orm
    .select({
      id: deployments.id,
      releaseId: deployments.releaseId,
      status: deployments.status,
      liveAt: deployments.liveAt,
    })
    .from(deployments)
    .where(eq(deployments.projectId, projectId))
    .orderBy(desc(deployments.liveAt), desc(deployments.createdAt));
  const keep = new Set<string>();
  for (const r of rows) if (IN_USE.has(r.status)) keep.add(r.releaseId ?? r.id);
  const wasLive = new Set<string>();
  for (const r of rows) {
    if (!r.liveAt || wasLive.size >= KEEP_RELEASES) continue;
    wasLive.add(r.releaseId ?? r.id);
  }
  for (const id of wasLive) keep.add(id);
  const root = path.join(projectDir(deps, projectId), 'releases');
  let names: string[];
  try {
    names = fs.readdirSync(root);
  } catch {
    return;
  }
  for (const name of names)
    if (!keep.has(name)) fs.rmSync(path.join(root, name), { recursive: true, force: true });
}
