import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import type net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startOpenAIServer } from '../fakes/openai-server.ts';
import { freePort, runWhenDone, seedCrashWorkflow, sigkill, sleep, startPier, v1At } from './pier-child.ts';

// Crash-resume end to end: a real `pier serve` process runs a five-step workflow and is killed with SIGKILL
// while step three (an http request) is in flight. A new process on the same data finds the step's lease
// expired, runs step three again and finishes the run; steps one and two (LLM calls, counted at the fake
// provider) ran exactly once.

describe('workflow crash-resume', { timeout: 900_000 }, () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('resumes at step three after the worker is SIGKILLed, without repeating steps one and two', async () => {
    const openai = await startOpenAIServer();
    cleanups.push(() => openai.close());
    let stepThreeHits = 0;
    let firstHit: (() => void) | null = null;
    const hit = new Promise<void>((ok) => {
      firstHit = ok;
    });
    const site = http.createServer((req, res) => {
      req.resume();
      stepThreeHits++;
      if (stepThreeHits === 1) {
        firstHit?.();
        return; // hangs: the process is killed while waiting for this answer
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((ok) => site.listen(0, '127.0.0.1', ok));
    cleanups.push(() => {
      site.closeAllConnections();
      site.close();
    });
    const siteUrl = `http://127.0.0.1:${(site.address() as net.AddressInfo).port}`;

    // Seeded on storage the child processes then open.
    const { liveKey, slug, workflowId, childEnv } = await seedCrashWorkflow(
      cleanups,
      'pier-wf-crash-',
      {
        slug: 'five',
        name: 'Five steps',
        steps: [
          { id: 's1', type: 'llm', model: 'gpt-4o-mini', prompt: 'one' },
          {
            id: 's2',
            type: 'llm',
            model: 'gpt-4o-mini',
            prompt: 'two {{steps.s1.output}}',
            dependsOn: ['s1'],
          },
          { id: 's3', type: 'http', url: `${siteUrl}/three`, dependsOn: ['s2'], timeoutMs: 60_000 },
          { id: 's4', type: 'code', code: 'return input.steps.s3.output.body.ok', dependsOn: ['s3'] },
          { id: 's5', type: 'transform', expression: '{"done": steps.s4.output}', dependsOn: ['s4'] },
        ],
      },
      { OPENAI_API_KEY: 'sk-test-platform', OPENAI_BASE_URL: `${openai.url}/v1` },
    );
    const port = await freePort();
    const call = v1At(port, liveKey);
    const children: ChildProcess[] = [];
    cleanups.push(async () => {
      for (const c of children) await sigkill(c);
    });
    const start = async () => {
      const child = await startPier(port, childEnv);
      children.push(child);
      return child;
    };

    const t0 = Date.now();
    const stage = (what: string) => console.error(`[crash-resume] ${what} after ${Date.now() - t0} ms`);
    const first = await start();
    stage('first process up');
    const started = await call('POST', `/workflows/${workflowId}/run`, { projectSlug: slug });
    expect(started.status, JSON.stringify(started.json)).toBe(201);
    const runId = started.json.id;
    await Promise.race([hit, sleep(120_000)]);
    expect(stepThreeHits).toBe(1);
    stage('step three in flight');
    await sigkill(first);

    await start();
    stage('second process up');
    const run = await runWhenDone(call, runId, 120_000);
    expect(run.status, JSON.stringify(run)).toBe('completed');
    expect(run.output.s5).toEqual({ done: true });
    const chats = openai.requests.filter((r) => r.path === '/v1/chat/completions');
    expect(chats).toHaveLength(2);
    expect(run.stepStates.s1.attempts).toBe(1);
    expect(run.stepStates.s2.attempts).toBe(1);
    // The crash is counted apart from attempts: the step's retry budget is untouched.
    expect(run.stepStates.s3).toMatchObject({ attempts: 1, crashRecoveries: 1 });
    expect(stepThreeHits).toBe(2);
  });
});
