import { defineRoute, defineV1Routes, type V1Context } from '../../http/v1-kit.ts';
import { cancelRun, getRun, listRuns, retryRun, startRun } from './runs.ts';
import * as S from './schema.ts';
import { createWorkflow, deleteWorkflow, getWorkflow, listWorkflows, patchWorkflow } from './workflows.ts';

// HTTP only: each workflows operation's zod contract and a call into the service. Mounted at /v1/workflows.

const scope = (c: V1Context) => ({ orgId: c.caller.orgId, environment: c.caller.environment });
const NF = 'WORKFLOW_NOT_FOUND';
const RNF = 'WORKFLOW_RUN_NOT_FOUND';

export const workflowsV1 = defineV1Routes({
  name: 'workflows',
  prefix: '/workflows',
  routes: [
    defineRoute({
      method: 'POST',
      url: '',
      name: 'workflows.create',
      summary: 'Create a workflow',
      description: 'The definition is checked as a whole; every problem is listed in one WORKFLOW_INVALID.',
      body: S.createBody,
      response: S.workflowOut,
      status: 201,
      errors: ['PROJECT_NOT_FOUND', 'WORKFLOW_INVALID', 'WORKFLOW_SLUG_TAKEN'],
      handler: (c, { body }) => createWorkflow(c.deps, scope(c), body),
    }),
    defineRoute({
      method: 'GET',
      url: '',
      name: 'workflows.list',
      summary: "List a project's workflows",
      query: S.listQuery,
      response: S.workflowPage,
      errors: ['PROJECT_NOT_FOUND'],
      handler: (c, { query }) => listWorkflows(c.deps, scope(c), query),
    }),
    defineRoute({
      method: 'GET',
      url: '/runs',
      name: 'workflows.runs.list',
      summary: "List a project's workflow runs",
      query: S.runListQuery,
      response: S.runPage,
      errors: ['PROJECT_NOT_FOUND'],
      handler: (c, { query }) => listRuns(c.deps, scope(c), query),
    }),
    defineRoute({
      method: 'GET',
      url: '/runs/:id',
      name: 'workflows.runs.get',
      summary: 'Get a workflow run',
      params: S.idParams,
      response: S.runOut,
      errors: [RNF],
      handler: (c, { params }) => getRun(c.deps, scope(c), params.id),
    }),
    defineRoute({
      method: 'POST',
      url: '/runs/:id/cancel',
      name: 'workflows.runs.cancel',
      summary: 'Cancel a pending or running workflow run',
      params: S.idParams,
      response: S.runOut,
      errors: [RNF, 'WORKFLOW_RUN_NOT_CANCELLABLE'],
      handler: (c, { params }) => cancelRun(c.deps, scope(c), params.id),
    }),
    defineRoute({
      method: 'POST',
      url: '/runs/:id/retry',
      name: 'workflows.runs.retry',
      summary: 'Retry a failed run from its failed step (beyond the contract)',
      description: 'Completed steps keep their stored outputs and are not run again.',
      params: S.idParams,
      response: S.runOut,
      errors: [RNF, 'WORKFLOW_RUN_NOT_RETRYABLE'],
      handler: (c, { params }) => retryRun(c.deps, scope(c), params.id),
    }),
    defineRoute({
      method: 'GET',
      url: '/:id',
      name: 'workflows.get',
      summary: 'Get a workflow',
      params: S.idParams,
      response: S.workflowOut,
      errors: [NF],
      handler: (c, { params }) => getWorkflow(c.deps, scope(c), params.id),
    }),
    defineRoute({
      method: 'PATCH',
      url: '/:id',
      name: 'workflows.update',
      summary: 'Update a workflow',
      params: S.idParams,
      body: S.patchBody,
      response: S.workflowOut,
      errors: [NF, 'WORKFLOW_INVALID', 'WORKFLOW_SLUG_TAKEN'],
      handler: (c, { params, body }) => patchWorkflow(c.deps, scope(c), params.id, body),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/:id',
      name: 'workflows.delete',
      summary: 'Delete a workflow (its runs stay readable)',
      params: S.idParams,
      response: S.deleted,
      errors: [NF],
      handler: (c, { params }) => deleteWorkflow(c.deps, scope(c), params.id),
    }),
    defineRoute({
      method: 'POST',
      url: '/:id/run',
      name: 'workflows.run',
      summary: 'Start a run of a workflow',
      params: S.idParams,
      body: S.runBody,
      response: S.runCreated,
      status: 201,
      errors: [NF, 'PROJECT_NOT_FOUND', 'WORKFLOW_VARIABLES_INVALID'],
      handler: (c, { params, body }) => startRun(c.deps, scope(c), params.id, body),
    }),
  ],
});
