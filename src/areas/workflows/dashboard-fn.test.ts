import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { expectError } from '../../../test/security.ts';
import { seedMember, seedProject, seedV1Tenant } from '../../../test/seed.ts';
import { v1Client } from '../../../test/v1-client.ts';

// The dashboard's workflows functions: any member reads the list with recent runs and a run with its graph;
// the environment separates, and another organization's run is a 404 like a missing one.

describe('workflows dashboard functions', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });
  afterAll(() => t.close());

  it('lists workflows with recent runs and shows a run with its steps graph, for members only', async () => {
    const a = await seedV1Tenant(t.deps);
    const slug = (await seedProject(t.deps, a.org)).slug;
    const api = v1Client(t, a.live);
    const wf = (
      await api.post('/workflows', {
        projectSlug: slug,
        slug: 'double',
        name: 'Double',
        steps: [
          { id: 'x', type: 'transform', expression: '1' },
          { id: 'y', type: 'transform', expression: '2', dependsOn: ['x'] },
        ],
      })
    ).json();
    const run = (await api.post(`/workflows/${wf.id}/run`, { projectSlug: slug })).json();
    const member = await seedMember(t.deps, a.org.id, 'member');
    const base = { orgSlug: a.org.slug, environment: 'production' };

    const list = await t.call('listWorkflowsForCli', base, member.token);
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json().items).toHaveLength(1);
    expect(list.json().items[0]).toMatchObject({ slug: 'double', projectSlug: slug });
    expect(list.json().items[0].recentRuns.map((r: { id: string }) => r.id)).toEqual([run.id]);
    const sandbox = await t.call('listWorkflowsForCli', { ...base, environment: 'sandbox' }, member.token);
    expect(sandbox.json().items).toEqual([]);

    const view = await t.call('getWorkflowRunViewForCli', { ...base, runId: run.id }, member.token);
    expect(view.statusCode, view.body).toBe(200);
    expect(view.json().workflow).toMatchObject({ id: wf.id, name: 'Double' });
    expect(view.json().steps).toEqual([
      { id: 'x', type: 'transform', dependsOn: [] },
      { id: 'y', type: 'transform', dependsOn: ['x'] },
    ]);
    expect(Object.keys(view.json().run.stepStates).sort()).toEqual(['x', 'y']);

    // Another organization's member: their own org does not hold this run; a stranger's slug is a 404 too.
    const b = await seedV1Tenant(t.deps);
    const other = { orgSlug: b.org.slug, environment: 'production', runId: run.id };
    expectError(
      await t.call('getWorkflowRunViewForCli', other, b.owner.token),
      404,
      'WORKFLOW_RUN_NOT_FOUND',
    );
    expectError(await t.call('listWorkflowsForCli', base, b.owner.token), 404, 'ORG_NOT_FOUND');
    expectError(
      await t.call('getWorkflowRunViewForCli', { ...base, runId: 'not-a-uuid' }, member.token),
      404,
      'WORKFLOW_RUN_NOT_FOUND',
    );
    const wrongEnv = { ...base, environment: 'sandbox', runId: run.id };
    expectError(
      await t.call('getWorkflowRunViewForCli', wrongEnv, member.token),
      404,
      'WORKFLOW_RUN_NOT_FOUND',
    );
  });
});
