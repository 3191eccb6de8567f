import { parentPort } from 'node:worker_threads';
import type { DigestWants } from './content.ts';
import { digestScoped, type ScopeOptions } from './options/scope.ts';

// A conversion thread of convert-pool.ts: one page at a time, parsed once, answered with its digest.
parentPort?.postMessage({ ready: true });
parentPort?.on(
  'message',
  (m: { id: number; html: string; url: string; want: DigestWants; scope?: ScopeOptions }) => {
    try {
      parentPort?.postMessage({ id: m.id, digest: digestScoped(m.html, m.url, m.want, m.scope) });
    } catch (err) {
      parentPort?.postMessage({ id: m.id, error: (err as Error).message });
    }
  },
);
