import { expect } from 'vitest';
import type { V1Client } from './v1-client.ts';

// The workflow tests' v1 steps, in one place: create a workflow in the test's project, start a run, read
// it, and poll it until a condition holds (by default: it ended).

export type Run = Record<string, any>;
export const finished = (r: Run) => ['completed', 'failed', 'cancelled'].includes(r.status);

/** `client` and `project` are read at each call: a test that restarts Pier swaps its client. */
export function workflowKit(client: () => V1Client, project: () => string) {
  const create = async (body: Record<string, unknown>) => {
    const r = await client().post('/workflows', { projectSlug: project(), name: 'wf', ...body });
    expect(r.statusCode, r.body).toBe(201);
    return r.json().id as string;
  };
  /** `body`: the run's `variables`, `metadata`, `webhook`. */
  const start = async (id: string, body: Record<string, unknown> = {}) => {
    const r = await client().post(`/workflows/${id}/run`, { projectSlug: project(), ...body });
    expect(r.statusCode, r.body).toBe(201);
    return r.json().id as string;
  };
  const get = async (runId: string): Promise<Run> => (await client().get(`/workflows/runs/${runId}`)).json();
  const until = async (runId: string, done: (r: Run) => boolean = finished, ms = 90_000) => {
    const end = Date.now() + ms;
    for (;;) {
      const r = await get(runId);
      if (done(r)) return r;
      if (Date.now() > end) throw new Error(`run stuck: ${JSON.stringify(r).slice(0, 4000)}`);
      await new Promise((ok) => setTimeout(ok, 50));
    }
  };
  return { create, start, get, until };
}
