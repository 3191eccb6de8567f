import { and, eq, inArray, ne } from 'drizzle-orm';
import type { Deps } from '../../deps.ts';
import { deployments } from './runtime/tables.ts';

/**
 * Makes one deployment its project's live one and supersedes the one that was live (or crashed), in one
 * transaction: a reader never sees two live deployments or none. Used by every runtime driver.
 */
export async function markDeploymentLive(deps: Deps, projectId: string, deploymentId: string): Promise<void> {
  const now = deps.clock.now();
  await deps.db.orm.transaction(async (tx) => {
    await tx
      .update(deployments)
      .set({ status: 'superseded', finishedAt: now })
      .where(
        and(
          eq(deployments.projectId, projectId),
          inArray(deployments.status, ['live', 'crashed']),
          ne(deployments.id, deploymentId),
        ),
      );
    await tx
      .update(deployments)
      .set({ status: 'live', liveAt: now, finishedAt: null, errorMessage: null })
      .where(eq(deployments.id, deploymentId));
  });
}
