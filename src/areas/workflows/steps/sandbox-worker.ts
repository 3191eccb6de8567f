import { parentPort, workerData } from 'node:worker_threads';
import { getQuickJS } from 'quickjs-emscripten';
import { evalInQuickJS } from './quickjs-eval.ts';

// The code step's worker thread (code.ts starts one per evaluation): evaluates and posts the result back.

const { code, input, opts } = workerData as {
  code: string;
  input: unknown;
  opts: { timeLimitMs: number; memoryLimitMb: number };
};
await getQuickJS();
parentPort!.postMessage('ready');
parentPort!.postMessage(await evalInQuickJS(code, input, opts));
