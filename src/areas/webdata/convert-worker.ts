import { parentPort } from 'node:worker_threads';
import { digestPage } from './content.ts';

// A conversion thread of convert-pool.ts: one page at a time, parsed once, answered with its digest.
parentPort?.postMessage({ ready: true });
parentPort?.on('message', (m: { id: number; html: string; url: string; markdown: boolean }) => {
  try {
    parentPort?.postMessage({ id: m.id, digest: digestPage(m.html, m.url, m.markdown) });
  } catch (err) {
    parentPort?.postMessage({ id: m.id, error: (err as Error).message });
  }
});
