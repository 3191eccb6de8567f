import { and, desc, eq, inArray } from 'drizzle-orm';
import { z } from 'zod';
import { audit } from '../../core/audit/audit.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { MANAGERS, projectForUser, requireRole, slugInput } from '../orgs/index.ts';
import { hostingErrors } from './errors.ts';
import { signalApp } from './runtime/runtime.ts';
import { deployments } from './runtime/tables.ts';

// `pier restart`: a rolling restart of the live version, or — after a crash loop ended the deployment as
// `crashed` (docs/decisions/069) — a fresh start of that version through the deploy job, which clears the
// reason and makes it live again once healthy (or `failed` with the new reason).
export const restartAppForCli = defineFn({
  name: 'restartAppForCli',
  summary:
    "Restarts the project's app (owner or admin); a crashed deployment is started again and goes live once healthy.",
  auth: { kind: 'user' },
  input: z.strictObject({ projectSlug: slugInput }),
  output: z.object({ deploymentId: z.string(), status: z.enum(['live', 'starting']) }),
  errors: ['PROJECT_NOT_FOUND', 'NOTHING_TO_RESTART'],
  handler: async ({ deps, caller }, { projectSlug }) => {
    const { project, org, role } = await projectForUser(deps, caller.userId, projectSlug);
    requireRole(role, MANAGERS);
    const [d] = await deps.db.orm
      .select()
      .from(deployments)
      .where(and(eq(deployments.projectId, project.id), inArray(deployments.status, ['live', 'crashed'])))
      .orderBy(desc(deployments.createdAt))
      .limit(1);
    if (!d) throw hostingErrors.nothingToRestart(project.slug);
    await audit(deps, { kind: 'user', id: caller.userId }, 'app.restart', org.id, {
      project: project.slug,
      deploymentId: d.id,
    });
    if (d.status === 'live') {
      await signalApp(deps, { op: 'restart', projectId: project.id });
      return { deploymentId: d.id, status: 'live' as const };
    }
    const [row] = await deps.db.orm
      .update(deployments)
      .set({ status: 'starting', errorMessage: null, finishedAt: null })
      .where(and(eq(deployments.id, d.id), eq(deployments.status, 'crashed')))
      .returning({ id: deployments.id });
    if (row) await deps.jobs.enqueue('hosting.deploy', { deploymentId: d.id });
    return { deploymentId: d.id, status: 'starting' as const };
  },
});
