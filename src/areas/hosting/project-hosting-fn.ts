import { z } from 'zod';
import { audit } from '../../core/audit/audit.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { projectForUser, requireRole, slugInput } from '../orgs/index.ts';
import { destroyProject } from './project-hosting.ts';

export const destroyProjectForCli = defineFn({
  name: 'destroyProjectForCli',
  minRole: 'owner',
  summary: "Stops the project's app, drops its database, frees its hostname and marks it destroyed (owner).",
  auth: { kind: 'user' },
  input: z.strictObject({ slug: slugInput }),
  output: z.object({ ok: z.literal(true), slug: z.string() }),
  errors: ['PROJECT_NOT_FOUND'],
  handler: async ({ deps, caller }, { slug }) => {
    const { project, org, role } = await projectForUser(deps, caller.userId, slug);
    requireRole(role, ['owner']);
    await destroyProject(deps, project);
    await audit(deps, { kind: 'user', id: caller.userId }, 'project.destroy', org.id, { slug });
    return { ok: true as const, slug };
  },
});
