import os from 'node:os';
import { Worker } from 'node:worker_threads';
import type { SandboxLimits, SandboxResult } from './quickjs-eval.ts';

// A warm pool of code-step threads (sandbox-worker.ts), each with QuickJS loaded once: a step costs a fresh
// QuickJS runtime (about a millisecond), not a thread and a WASM engine (about half a second). Threads keep the
// engine's event loop (lease heartbeats, other steps) free while guest code runs. A step's deadline and a
// cancel are checked inside QuickJS (the interrupt handler reads a shared flag); a thread that still has not
// answered a grace period after its deadline (QuickJS near its memory limit collects garbage on every
// allocation and reaches its interrupt check only rarely), or that crashes, is terminated and replaced.

const POOL_SIZE = Math.max(1, Math.min(4, os.availableParallelism()));
const GRACE_MS = 1000;
/** How long a step may wait for a thread (all busy, or the first ones still loading QuickJS). */
const WAIT_LIMIT_MS = 60_000;

type Job = {
  code: string;
  input: unknown;
  limits: SandboxLimits;
  signal?: AbortSignal;
  resolve: (r: SandboxResult) => void;
  done: boolean;
  timers: NodeJS.Timeout[];
  onAbort?: () => void;
};
type Thread = { worker: Worker; ready: boolean; dead: boolean; job: (Job & { id: number }) | null };

const threads: Thread[] = [];
const queue: Job[] = [];
let nextId = 1;

function settle(job: Job, r: SandboxResult): void {
  if (job.done) return;
  job.done = true;
  for (const t of job.timers) clearTimeout(t);
  if (job.onAbort) job.signal?.removeEventListener('abort', job.onAbort);
  job.resolve(r);
}

/** Ends a thread (crashed, overran, did not start) and fails the step it ran; dispatch starts another. */
function retire(t: Thread, error: (job: Job) => string): void {
  if (t.dead) return;
  t.dead = true;
  threads.splice(threads.indexOf(t), 1);
  void t.worker.terminate();
  if (t.job) settle(t.job, { ok: false, error: error(t.job) });
  t.job = null;
  dispatch();
}

function spawn(): void {
  const worker = new Worker(new URL('./sandbox-worker.ts', import.meta.url), {
    // The thread's own JavaScript heap: the guest's memory is WASM memory, capped by QuickJS per runtime.
    resourceLimits: { maxOldGenerationSizeMb: 128 },
  });
  // An idle pool does not keep the process alive; a running step's timers do.
  worker.unref();
  const t: Thread = { worker, ready: false, dead: false, job: null };
  threads.push(t);
  worker.on('message', (m: 'ready' | { id: number; result: SandboxResult }) => {
    if (m === 'ready') t.ready = true;
    else if (t.job?.id === m.id) {
      const job = t.job;
      t.job = null;
      settle(job, m.result);
    }
    dispatch();
  });
  worker.once('error', (err) =>
    retire(t, (job) =>
      /memory/i.test(String(err))
        ? `Memory limit of ${job.limits.memoryLimitMb} MB exceeded.`
        : `Sandbox failed: ${String((err as Error)?.message ?? err)}`,
    ),
  );
  worker.once('exit', () => retire(t, () => 'The sandbox stopped without a result.'));
}

function start(t: Thread, job: Job): void {
  const cancel = new SharedArrayBuffer(4);
  const flag = new Int32Array(cancel);
  const id = nextId++;
  t.job = { ...job, id };
  // The job object settles through the thread's copy; keep both views of `done` in step.
  const active = t.job;
  active.timers = [
    setTimeout(
      () => retire(t, () => `Time limit of ${job.limits.timeLimitMs} ms exceeded.`),
      job.limits.timeLimitMs + GRACE_MS,
    ),
  ];
  if (job.onAbort) job.signal?.removeEventListener('abort', job.onAbort);
  active.onAbort = () => {
    Atomics.store(flag, 0, 1);
    settle(active, { ok: false, error: 'Cancelled.' });
    // The thread stays busy until QuickJS sees the flag; one that does not is replaced.
    const stuck = setTimeout(() => {
      if (t.job === active) retire(t, () => 'Cancelled.');
    }, GRACE_MS);
    stuck.unref();
  };
  job.signal?.addEventListener('abort', active.onAbort, { once: true });
  t.worker.postMessage({ id, code: job.code, input: job.input ?? null, limits: job.limits, cancel });
}

function dispatch(): void {
  for (;;) {
    const free = threads.find((t) => t.ready && !t.job);
    const job = queue[0];
    if (!free || !job) break;
    queue.shift();
    for (const timer of job.timers) clearTimeout(timer);
    start(free, job);
  }
  const starting = threads.filter((t) => !t.ready).length;
  for (let n = starting; n < queue.length && threads.length < POOL_SIZE; n++) spawn();
}

function dequeue(job: Job): void {
  const i = queue.indexOf(job);
  if (i >= 0) queue.splice(i, 1);
}

export function evalInPool(
  code: string,
  input: unknown,
  limits: SandboxLimits,
  signal?: AbortSignal,
): Promise<SandboxResult> {
  if (signal?.aborted) return Promise.resolve({ ok: false, error: 'Cancelled.' });
  return new Promise((resolve) => {
    const job: Job = { code, input, limits, signal, resolve, done: false, timers: [] };
    job.timers.push(
      setTimeout(() => {
        dequeue(job);
        settle(job, { ok: false, error: `No code sandbox was free within ${WAIT_LIMIT_MS / 1000} s.` });
      }, WAIT_LIMIT_MS),
    );
    job.onAbort = () => {
      dequeue(job);
      settle(job, { ok: false, error: 'Cancelled.' });
    };
    signal?.addEventListener('abort', job.onAbort, { once: true });
    queue.push(job);
    dispatch();
  });
}
