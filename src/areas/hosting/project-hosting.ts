import fs from 'node:fs';
import { and, eq, inArray } from 'drizzle-orm';
import type { Deps } from '../../deps.ts';
import { type Project, projects } from '../orgs/index.ts';
import { destroyKubeApp } from './kubernetes/deploy.ts';
import { dropAppDatabase, projectDir, provisionAppDatabase } from './runtime/app-databases.ts';
import { hostingRuntime, signalApp } from './runtime/runtime.ts';
import { deployments } from './runtime/tables.ts';

// A project's hosting life: provisioning (database, hostname, machine slot) and destruction.

/** provisioning → ready, or error with the reason; the hostname is the slug, unique among live projects. */
export async function provisionProject(deps: Deps, p: Project): Promise<Project> {
  let status: 'ready' | 'error' = 'ready';
  let errorMessage: string | null = null;
  try {
    await provisionAppDatabase(deps, p.id);
  } catch (err) {
    status = 'error';
    errorMessage = `The project's database could not be created: ${(err as Error).message}`;
    deps.log.error({ err, project: p.slug }, 'provisioning failed');
  }
  const [row] = await deps.db.orm
    .update(projects)
    .set({ status, errorMessage })
    .where(eq(projects.id, p.id))
    .returning();
  return row!;
}

/** Stops the app everywhere, drops its database, frees its hostname and marks the project destroyed. */
export async function destroyProject(deps: Deps, p: Project): Promise<void> {
  await deps.db.orm.update(projects).set({ status: 'destroying' }).where(eq(projects.id, p.id));
  const local = hostingRuntime(deps);
  if (local) {
    await local.supervisor.stop(p.id);
    await local.dbs.close(p.id);
  }
  await signalApp(deps, { op: 'stop', projectId: p.id });
  await destroyKubeApp(deps, p);
  await dropAppDatabase(deps, p.id);
  const now = deps.clock.now();
  await deps.db.orm
    .update(deployments)
    .set({ status: 'superseded', finishedAt: now })
    .where(
      and(
        eq(deployments.projectId, p.id),
        inArray(deployments.status, ['live', 'crashed', 'building', 'starting']),
      ),
    );
  await deps.db.orm
    .update(deployments)
    .set({ status: 'failed', errorMessage: 'The project was destroyed.', finishedAt: now })
    .where(and(eq(deployments.projectId, p.id), eq(deployments.status, 'uploading')));
  // destroyedAt frees the slug (the partial unique index) and takes the project out of every list.
  await deps.db.orm
    .update(projects)
    .set({ status: 'destroyed', destroyedAt: now })
    .where(eq(projects.id, p.id));
  fs.rmSync(projectDir(deps, p.id), { recursive: true, force: true });
}
