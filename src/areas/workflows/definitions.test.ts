import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedProject, seedV1Tenant } from '../../../test/seed.ts';
import { v1Client } from '../../../test/v1-client.ts';
import { expectV1Security, type V1Tenant } from '../../../test/v1-security.ts';

// Workflow definitions through the v1 API: CRUD as the contract has it, every definition problem listed in
// one answer, run variables checked by name, and every route a 404 for another organization.

describe('workflow definitions', () => {
  let t: TestApp;
  let a: V1Tenant;
  let slug: string;

  beforeAll(async () => {
    t = await testApp({
      env: {
        OPENAI_API_KEY: 'sk-test-platform',
        OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
        // Pier's own gateway takes model names no vendor claims: an unknown provider must not slip through it.
        PIER_MODELS_URL: 'http://127.0.0.1:9/v1',
      },
    });
    a = await seedV1Tenant(t.deps);
    slug = (await seedProject(t.deps, a.org)).slug;
  });
  afterAll(() => t.close());

  const steps = [
    { id: 'fetch', type: 'http', url: 'https://example.com/{{city}}' },
    {
      id: 'sum',
      type: 'llm',
      model: 'gpt-4o-mini',
      prompt: 'Summarise {{steps.fetch.output.body}}',
      dependsOn: ['fetch'],
    },
  ];

  it('creates, reads, lists, updates and deletes a workflow', async () => {
    const api = v1Client(t, a.live);
    const created = await api.post('/workflows', {
      projectSlug: slug,
      slug: 'weather',
      name: 'Weather',
      steps,
      variables: { city: { type: 'string', required: true } },
    });
    expect(created.statusCode, created.body).toBe(201);
    const wf = created.json();
    expect(wf).toMatchObject({ projectSlug: slug, slug: 'weather', name: 'Weather', description: null });
    expect(wf.steps).toHaveLength(2);
    expect((await api.get(`/workflows/${wf.id}`)).json().slug).toBe('weather');
    const page = (await api.get('/workflows', { projectSlug: slug })).json();
    expect(page.items.map((w: { id: string }) => w.id)).toContain(wf.id);
    const dup = await api.post('/workflows', { projectSlug: slug, slug: 'weather', name: 'Again' });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().error.code).toBe('WORKFLOW_SLUG_TAKEN');
    const patched = await api.patch(`/workflows/${wf.id}`, { name: 'Weather 2', description: 'd' });
    expect(patched.json()).toMatchObject({ name: 'Weather 2', description: 'd' });
    expect((await api.del(`/workflows/${wf.id}`)).json()).toEqual({ success: true });
    expect((await api.get(`/workflows/${wf.id}`)).statusCode).toBe(404);
  });

  it('lists every problem of a definition at once', async () => {
    const api = v1Client(t, a.live);
    const r = await api.post('/workflows', {
      projectSlug: slug,
      slug: 'broken',
      name: 'Broken',
      variables: { n: { type: 'number', default: 'x' } },
      steps: [
        { id: 'a', type: 'llm', prompt: 'hi {{nope}}' },
        { id: 'a', type: 'teleport' },
        { id: 'b', type: 'http', url: 'ftp://x', dependsOn: ['ghost'] },
        { id: 'c', type: 'code', code: 'return 1', dependsOn: ['d'] },
        { id: 'd', type: 'code', code: 'return 1', dependsOn: ['c'] },
        { id: 'e', type: 'transform', expression: '(', dependsOn: [] },
        { id: 'f', type: 'llm', model: 'claude-sonnet-4-5', prompt: '{{steps.e.output}}' },
        { id: 'g', type: 'condition', expression: 'true', whenTrue: ['h'] },
        { id: 'h', type: 'code', code: 'return 1' },
      ],
    });
    expect(r.statusCode).toBe(400);
    const { code, message } = r.json().error;
    expect(code).toBe('WORKFLOW_INVALID');
    for (const bit of [
      'default is string, not number',
      "id 'a' is used more than once",
      "unknown type 'teleport'",
      "type llm needs 'model'",
      "'{{nope}}' names no variable",
      "dependsOn names 'ghost'",
      'url must start with http',
      'dependency cycle through c, d',
      'not a valid JSONata expression',
      "model 'claude-sonnet-4-5'",
      "names step 'e', which is not a step this one depends on",
      "branch step 'h' must list 'g'",
    ])
      expect(message).toContain(bit);
  });

  it('refuses at create and update an llm step whose provider does not exist or is not configured', async () => {
    const api = v1Client(t, a.live);
    const llm = (provider: string) => ({
      id: 'ask',
      type: 'llm',
      provider,
      model: 'gpt-4o-mini',
      prompt: 'hi',
    });
    const bad = await api.post('/workflows', {
      projectSlug: slug,
      slug: 'ghost-provider',
      name: 'Ghost',
      steps: [llm('nosuch')],
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('WORKFLOW_INVALID');
    expect(bad.json().error.message).toContain("steps.ask: provider 'nosuch' does not exist");
    const ok = await api.post('/workflows', {
      projectSlug: slug,
      slug: 'real-provider',
      name: 'Real',
      steps: [llm('openai')],
    });
    expect(ok.statusCode, ok.body).toBe(201);
    for (const provider of ['nosuch', 'anthropic']) {
      const patched = await api.patch(`/workflows/${ok.json().id}`, { steps: [llm(provider)] });
      expect(patched.statusCode).toBe(400);
      expect(patched.json().error.message).toContain('steps.ask:');
      expect(patched.json().error.message).toContain(provider);
    }
    expect((await api.get(`/workflows/${ok.json().id}`)).json().steps[0].provider).toBe('openai');
  });

  it('checks run variables and names each bad one', async () => {
    const api = v1Client(t, a.live);
    const wf = (
      await api.post('/workflows', {
        projectSlug: slug,
        slug: 'vars',
        name: 'Vars',
        steps: [{ id: 'x', type: 'transform', expression: 'variables.n * 2' }],
        variables: {
          n: { type: 'number', required: true },
          tags: { type: 'array' },
          label: { type: 'string', default: 'hi' },
        },
      })
    ).json();
    const bad = await api.post(`/workflows/${wf.id}/run`, {
      projectSlug: slug,
      variables: { tags: 'not-an-array', extra: 1 },
    });
    expect(bad.statusCode).toBe(400);
    const err = bad.json().error;
    expect(err.code).toBe('WORKFLOW_VARIABLES_INVALID');
    expect(err.message).toContain("'n' is required");
    expect(err.message).toContain("'tags' must be array, got string");
    expect(err.message).toContain("'extra' is not a variable");
    const ok = await api.post(`/workflows/${wf.id}/run`, { projectSlug: slug, variables: { n: 2 } });
    expect(ok.statusCode, ok.body).toBe(201);
    expect(ok.json()).toMatchObject({
      workflowId: wf.id,
      status: 'pending',
      completedSteps: 0,
      totalSteps: 1,
    });
    expect(ok.json().variables).toEqual({ n: 2, label: 'hi' });
    const run = (await api.get(`/workflows/runs/${ok.json().id}`)).json();
    expect(run.stepStates.x).toMatchObject({ status: 'ready', attempts: 0 });
    const list = (await api.get('/workflows/runs', { projectSlug: slug, workflowId: wf.id })).json();
    expect(list.items).toHaveLength(1);
    const wrongProject = await api.post(`/workflows/${wf.id}/run`, {
      projectSlug: 'nope-nope',
      variables: { n: 1 },
    });
    expect(wrongProject.json().error.code).toBe('PROJECT_NOT_FOUND');
  });

  it("answers 404 for another organization's workflow or run on every route", {
    timeout: 180_000,
  }, async () => {
    const api = v1Client(t, a.live);
    const wf = (
      await api.post('/workflows', {
        projectSlug: slug,
        slug: 'mine',
        name: 'Mine',
        steps: [{ id: 'x', type: 'transform', expression: '1' }],
      })
    ).json();
    const run = (await api.post(`/workflows/${wf.id}/run`, { projectSlug: slug })).json();
    const cases = [
      { method: 'GET' as const, url: `/workflows/${wf.id}`, notFoundCode: 'WORKFLOW_NOT_FOUND' },
      {
        method: 'PATCH' as const,
        url: `/workflows/${wf.id}`,
        body: { name: 'x' },
        notFoundCode: 'WORKFLOW_NOT_FOUND',
      },
      { method: 'DELETE' as const, url: `/workflows/${wf.id}`, notFoundCode: 'WORKFLOW_NOT_FOUND' },
      {
        method: 'POST' as const,
        url: `/workflows/${wf.id}/run`,
        body: { projectSlug: slug },
        notFoundCode: 'WORKFLOW_NOT_FOUND',
      },
      { method: 'GET' as const, url: `/workflows/runs/${run.id}`, notFoundCode: 'WORKFLOW_RUN_NOT_FOUND' },
      {
        method: 'POST' as const,
        url: `/workflows/runs/${run.id}/cancel`,
        notFoundCode: 'WORKFLOW_RUN_NOT_FOUND',
      },
      {
        method: 'POST' as const,
        url: `/workflows/runs/${run.id}/retry`,
        notFoundCode: 'WORKFLOW_RUN_NOT_FOUND',
      },
    ];
    for (const c of cases) await expectV1Security(t, { ...c, owner: a });
    for (const url of [`/workflows?projectSlug=${slug}`, `/workflows/runs?projectSlug=${slug}`]) {
      const other = await seedV1Tenant(t.deps);
      const r = await t.v1('GET', url, other.live);
      expect(r.statusCode).toBe(404);
      expect(r.json().error.code).toBe('PROJECT_NOT_FOUND');
    }
    expect((await api.get('/workflows/not-a-uuid')).json().error.code).toBe('WORKFLOW_NOT_FOUND');
    // Cancel of a pending run works once; a second time it is a 409.
    expect((await api.post(`/workflows/runs/${run.id}/cancel`)).json().status).toBe('cancelled');
    expect((await api.post(`/workflows/runs/${run.id}/cancel`)).statusCode).toBe(409);
    expect((await api.post(`/workflows/runs/${run.id}/retry`)).json().error.code).toBe(
      'WORKFLOW_RUN_NOT_RETRYABLE',
    );
  });
});
