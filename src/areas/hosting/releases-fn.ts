import { z } from 'zod';
import { audit } from '../../core/audit/audit.ts';
import { uuidInput } from '../../core/ids.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { MANAGERS, projectForUser, requireRole, slugInput } from '../orgs/index.ts';
import { deployers, deploymentSchema, toDeployment } from './deployments.ts';
import { redeployFrom, rollbackTo } from './releases.ts';

// `pier rollback` and `pier redeploy` (and the dashboard's buttons): a new deployment made from an earlier one,
// followed like any other with getDeploymentForCli.

const input = z.strictObject({
  projectSlug: slugInput,
  /** The deployment to go back to / build again; default: the previous live one / the live one. */
  deploymentId: uuidInput.optional(),
});

export const rollbackDeploymentForCli = defineFn({
  name: 'rollbackDeploymentForCli',
  minRole: 'manager',
  summary:
    "Rolls the project back to an earlier deployment's kept build (default: the one live before the current one): no build, started beside the live version and swapped in once healthy.",
  auth: { kind: 'user' },
  input,
  output: deploymentSchema,
  errors: [
    'PROJECT_NOT_FOUND',
    'PROJECT_NOT_READY',
    'DEPLOYMENT_NOT_FOUND',
    'NOTHING_TO_ROLL_BACK',
    'RELEASE_PRUNED',
    'DEPLOYMENT_NOT_REUSABLE',
    'QUOTA_EXCEEDED',
  ],
  handler: async ({ deps, caller }, { projectSlug, deploymentId }) => {
    const { project, org, role } = await projectForUser(deps, caller.userId, projectSlug);
    requireRole(role, MANAGERS);
    const createdBy = `user:${caller.userId}`;
    const d = await rollbackTo(deps, { project, org, createdBy, deploymentId });
    await audit(deps, { kind: 'user', id: caller.userId }, 'deployment.rollback', org.id, {
      project: project.slug,
      deploymentId: d.id,
      to: d.sourceId,
    });
    return toDeployment(deps, d, project.slug, await deployers(deps, [d]));
  },
});

export const redeployDeploymentForCli = defineFn({
  name: 'redeployDeploymentForCli',
  minRole: 'manager',
  summary:
    "Builds an earlier deployment's stored artifact again (default: the live one's) with today's build settings and deploys it.",
  auth: { kind: 'user' },
  input,
  output: deploymentSchema,
  errors: [
    'PROJECT_NOT_FOUND',
    'PROJECT_NOT_READY',
    'DEPLOYMENT_NOT_FOUND',
    'NOTHING_TO_REDEPLOY',
    'DEPLOYMENT_NOT_REUSABLE',
    'QUOTA_EXCEEDED',
  ],
  handler: async ({ deps, caller }, { projectSlug, deploymentId }) => {
    const { project, org, role } = await projectForUser(deps, caller.userId, projectSlug);
    requireRole(role, MANAGERS);
    const createdBy = `user:${caller.userId}`;
    const d = await redeployFrom(deps, { project, org, createdBy, deploymentId });
    await audit(deps, { kind: 'user', id: caller.userId }, 'deployment.redeploy', org.id, {
      project: project.slug,
      deploymentId: d.id,
      from: d.sourceId,
    });
    return toDeployment(deps, d, project.slug, await deployers(deps, [d]));
  },
});
