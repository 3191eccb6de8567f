import { type ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { Keyring } from '../../src/core/crypto.ts';
import { type Db, openDb } from '../../src/core/db/client.ts';
import { startOpenAIServer } from '../fakes/openai-server.ts';
import { onPostgres, restartableTestDb, testApp } from '../harness.ts';
import { seedProject, seedV1Tenant } from '../seed.ts';

// Crash-resume end to end: a real `pier serve` process runs a five-step workflow and is killed with SIGKILL
// while step three (an http request) is in flight. A new process on the same data finds the step's lease
// expired, runs step three again and finishes the run; steps one and two (LLM calls, counted at the fake
// provider) ran exactly once.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

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

    // Seed a tenant and the workflow on storage the child processes then open.
    const secret = crypto.randomBytes(32).toString('base64url');
    // The database outlives the seeding app. On PGlite it lives in the child's DATA_DIR/db, started from the
    // suite's migrated template when there is one (as the harness does).
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-wf-crash-'));
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    let databaseUrl: string | undefined;
    let db: Db;
    if (onPostgres) {
      const store = await restartableTestDb();
      cleanups.push(() => store.drop());
      db = await store.open();
      databaseUrl = (db as Db & { url?: string }).url;
    } else {
      const template = process.env.PIER_TEST_PGLITE_TEMPLATE;
      if (template) fs.cpSync(template, path.join(dataDir, 'db'), { recursive: true });
      db = await openDb({ dataDir: path.join(dataDir, 'db') });
    }
    const t = await testApp({
      db,
      dataDir,
      keyring: new Keyring(Buffer.from(secret, 'base64url')),
      env: { OPENAI_API_KEY: 'sk-test-platform', OPENAI_BASE_URL: `${openai.url}/v1` },
    });
    const a = await seedV1Tenant(t.deps);
    const slug = (await seedProject(t.deps, a.org)).slug;
    const created = await t.v1('POST', '/workflows', a.live, {
      projectSlug: slug,
      slug: 'five',
      name: 'Five steps',
      steps: [
        { id: 's1', type: 'llm', model: 'gpt-4o-mini', prompt: 'one' },
        { id: 's2', type: 'llm', model: 'gpt-4o-mini', prompt: 'two {{steps.s1.output}}', dependsOn: ['s1'] },
        { id: 's3', type: 'http', url: `${siteUrl}/three`, dependsOn: ['s2'], timeoutMs: 60_000 },
        { id: 's4', type: 'code', code: 'return input.steps.s3.output.body.ok', dependsOn: ['s3'] },
        { id: 's5', type: 'transform', expression: '{"done": steps.s4.output}', dependsOn: ['s4'] },
      ],
    });
    expect(created.statusCode, created.body).toBe(201);
    const workflowId = created.json().id;
    await t.close();
    await db.close();

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const startPier = async (): Promise<ChildProcess> => {
      const child = spawn(process.execPath, ['src/main.ts', 'serve'], {
        cwd: root,
        env: {
          PATH: process.env.PATH,
          PORT: String(port),
          HOST: '127.0.0.1',
          DATA_DIR: dataDir,
          PIER_SECRET_KEY: secret,
          LOG_LEVEL: 'warn',
          OPENAI_API_KEY: 'sk-test-platform',
          OPENAI_BASE_URL: `${openai.url}/v1`,
          OUTBOUND_ALLOW: '127.0.0.1/32',
          WORKFLOW_LEASE_MS: '1500',
          ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr!.on('data', (c) => {
        stderr += c;
      });
      cleanups.push(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      });
      const end = Date.now() + 240_000;
      for (;;) {
        const ok = await fetch(`${base}/healthz`).then(
          (r) => r.ok,
          () => false,
        );
        if (ok) return child;
        if (Date.now() > end || child.exitCode !== null)
          throw new Error(`pier did not start (exit ${child.exitCode}): ${stderr.slice(-2000)}`);
        await sleep(200);
      }
    };
    const call = async (method: string, url: string, body?: unknown) => {
      const r = await fetch(`${base}/v1${url}`, {
        method,
        headers: { authorization: `Bearer ${a.live}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: r.status, json: (await r.json()) as Record<string, any> };
    };

    const t0 = Date.now();
    const stage = (what: string) => console.error(`[crash-resume] ${what} after ${Date.now() - t0} ms`);
    const first = await startPier();
    stage('first process up');
    const started = await call('POST', `/workflows/${workflowId}/run`, { projectSlug: slug });
    expect(started.status, JSON.stringify(started.json)).toBe(201);
    const runId = started.json.id;
    await Promise.race([hit, sleep(120_000)]);
    expect(stepThreeHits).toBe(1);
    stage('step three in flight');
    first.kill('SIGKILL');
    await new Promise((ok) => first.once('exit', ok));

    await startPier();
    stage('second process up');
    const end = Date.now() + 120_000;
    let run: Record<string, any>;
    for (;;) {
      run = (await call('GET', `/workflows/runs/${runId}`)).json;
      if (['completed', 'failed', 'cancelled'].includes(run.status) || Date.now() > end) break;
      await sleep(200);
    }
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
