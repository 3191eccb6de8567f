import { parentPort } from 'node:worker_threads';
import { getQuickJS } from 'quickjs-emscripten';
import { evalInQuickJS, type SandboxLimits } from './quickjs-eval.ts';

// A pooled code-step thread (sandbox-pool.ts): loads QuickJS once, then evaluates one job at a time, each in a
// fresh QuickJS runtime, and posts each result back with its job id.

type Job = { id: number; code: string; input: unknown; limits: SandboxLimits; cancel: SharedArrayBuffer };

await getQuickJS();
parentPort!.on('message', async (job: Job) => {
  const result = await evalInQuickJS(job.code, job.input, job.limits, new Int32Array(job.cancel));
  parentPort!.postMessage({ id: job.id, result });
});
parentPort!.postMessage('ready');
