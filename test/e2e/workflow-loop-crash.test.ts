import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import type net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, runWhenDone, seedCrashWorkflow, sigkill, sleep, startPier, v1At } from './pier-child.ts';

// Issue 35's test: a real `pier serve` runs a loop of 60 http POSTs (concurrency 2) and is SIGKILLed three
// times while items are in flight. The receiver, standing in for a payment or CRM API, keeps the first answer
// per Idempotency-Key (the Stripe convention). Counted there: every item arrives at most once plus at most the
// loop's concurrency per kill (only items in flight are sent again), each item with one key, so exactly one
// side effect per item; the run completes with the default retry settings (crashes spend no attempts).

const ITEMS = 60;
const CONCURRENCY = 2;
const KILLS = 3;
/** The nth request (counted at the receiver) is held unanswered and Pier is killed while it waits. */
const KILL_AT = [12, 30, 48];

describe('workflow loop crash', { timeout: 1_200_000 }, () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('SIGKILLed three times mid-loop, each item takes effect once and the run completes', async () => {
    const requests: { item: number; key: string | undefined }[] = [];
    const effects = new Map<string, number>(); // key → item: the side effect done once per key
    const replays: string[] = [];
    // One promise per kill point, made up front: a point reached while Pier is still starting is not missed.
    const killPoints = KILL_AT.map(() => {
      let reached = () => {};
      const promise = new Promise<void>((ok) => {
        reached = ok;
      });
      return { promise, reached };
    });
    const site = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const item = Number(req.url?.split('/').pop());
        const key = req.headers['idempotency-key'] as string | undefined;
        requests.push({ item, key });
        if (key && effects.has(key)) replays.push(key);
        else if (key) effects.set(key, item);
        const k = KILL_AT.indexOf(requests.length);
        if (k >= 0) {
          killPoints[k]!.reached();
          return; // held: Pier dies waiting for this answer
        }
        setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), 40);
      });
    });
    await new Promise<void>((ok) => site.listen(0, '127.0.0.1', ok));
    cleanups.push(() => {
      site.closeAllConnections();
      site.close();
    });
    const siteUrl = `http://127.0.0.1:${(site.address() as net.AddressInfo).port}`;

    const {
      liveKey,
      slug,
      workflowId,
      childEnv: env,
    } = await seedCrashWorkflow(cleanups, 'pier-wf-loop-crash-', {
      slug: 'invoices',
      name: 'Send invoices',
      steps: [
        {
          id: 'send',
          type: 'loop',
          items: `[0..${ITEMS - 1}]`,
          concurrency: CONCURRENCY,
          steps: [
            {
              id: 'post',
              type: 'http',
              method: 'POST',
              url: `${siteUrl}/invoices/{{item}}`,
              body: { invoice: '{{item}}' },
            },
          ],
        },
      ],
    });
    const port = await freePort();
    let child: ChildProcess | null = null;
    cleanups.push(() => (child ? sigkill(child) : undefined));
    const call = v1At(port, liveKey);

    const t0 = Date.now();
    const stage = (what: string) => console.error(`[loop-crash] ${what} after ${Date.now() - t0} ms`);
    child = await startPier(port, env);
    const started = await call('POST', `/workflows/${workflowId}/run`, { projectSlug: slug });
    expect(started.status, JSON.stringify(started.json)).toBe(201);
    const runId = started.json.id;
    for (let k = 0; k < KILLS; k++) {
      await Promise.race([killPoints[k]!.promise, sleep(240_000)]);
      expect(requests.length, `kill point ${k + 1} not reached`).toBeGreaterThanOrEqual(KILL_AT[k]!);
      await sigkill(child);
      stage(`kill ${k + 1} at request ${requests.length}`);
      site.closeAllConnections();
      child = await startPier(port, env);
      stage(`restart ${k + 1}`);
    }
    const run = await runWhenDone(call, runId, 300_000);
    stage(`run ${run.status}; ${requests.length} requests, ${replays.length} replays`);
    expect(run.status, JSON.stringify(run).slice(0, 2000)).toBe('completed');
    expect(run.stepStates.send).toMatchObject({
      attempts: 1,
      crashRecoveries: KILLS,
      completedItems: ITEMS,
      totalItems: ITEMS,
    });
    expect(run.output.send).toHaveLength(ITEMS);

    // At most one request per item, plus at most the loop's concurrency per kill (the items in flight).
    const perItem = Array.from({ length: ITEMS }, (_, i) => requests.filter((r) => r.item === i).length);
    expect(perItem.every((n) => n >= 1)).toBe(true);
    expect(requests.length).toBeLessThanOrEqual(ITEMS + CONCURRENCY * KILLS);
    expect(perItem.filter((n) => n > 1).length).toBeLessThanOrEqual(CONCURRENCY * KILLS);
    // One key per item, every request carrying it: the receiver did each item's side effect exactly once.
    expect(requests.every((r) => r.key)).toBe(true);
    for (let i = 0; i < ITEMS; i++)
      expect(new Set(requests.filter((r) => r.item === i).map((r) => r.key)).size).toBe(1);
    expect(effects.size).toBe(ITEMS);
    expect(new Set(effects.values()).size).toBe(ITEMS);
    expect(replays.length).toBe(requests.length - ITEMS);
    // The held requests at the kill points were among those sent again.
    expect(replays.length).toBeGreaterThanOrEqual(KILLS);
  });
});
