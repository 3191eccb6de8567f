import { Worker } from 'node:worker_threads';
import type { DigestWants, PageDigest } from './content.ts';
import { PageFailure } from './fetch-page.ts';
import { digestScoped, type ScopeOptions } from './options/scope.ts';

// Conversion off the fetch path: a crawl hands each fetched page to a small pool of worker threads that
// parse it once and return its title, canonical URL, links and markdown. On real documentation pages
// (50–750 KB) conversion, not the fetch, is the cost (hundreds of ms to seconds of CPU), so with it in
// threads the crawl's event loop keeps fetching, and on a machine with several cores pages convert in
// parallel. A page whose conversion outlives `timeoutMs` fails alone: its thread is ended and replaced.
// Size 0 converts inline (on the calling thread).

const THREAD_HEAP_MB = 512;

type Job = {
  id: number;
  html: string;
  url: string;
  want: DigestWants;
  scope?: ScopeOptions;
  resolve: (d: PageDigest) => void;
  reject: (e: Error) => void;
};
// A thread takes jobs once it has loaded (its start-up is not charged to a page's time limit).
type Slot = { worker: Worker; ready: boolean; job: Job | null; timer: NodeJS.Timeout | null };

export class ConvertPool {
  private readonly slots: Slot[] = [];
  private readonly waiting: Job[] = [];
  private nextId = 0;
  private closed = false;

  private readonly size: number;
  private readonly timeoutMs: number;

  constructor(size: number, timeoutMs: number) {
    this.size = size;
    this.timeoutMs = timeoutMs;
  }

  digest(html: string, url: string, want: DigestWants | boolean, scope?: ScopeOptions): Promise<PageDigest> {
    const wants = typeof want === 'boolean' ? { markdown: want } : want;
    if (this.size === 0) {
      try {
        return Promise.resolve(digestScoped(html, url, wants, scope));
      } catch (err) {
        return Promise.reject(err);
      }
    }
    if (this.closed) return Promise.reject(new Error('The conversion pool is closed.'));
    return new Promise((resolve, reject) => {
      this.waiting.push({ id: this.nextId++, html, url, want: wants, scope, resolve, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.waiting.splice(0)) job.reject(new Error('The conversion pool is closed.'));
    await Promise.all(this.slots.splice(0).map((s) => this.end(s)));
  }

  private dispatch(): void {
    while (this.waiting.length > 0) {
      const slot = this.slots.find((s) => s.ready && s.job === null);
      if (!slot) {
        if (this.slots.length < this.size) this.spawn();
        return;
      }
      const job = this.waiting.shift()!;
      slot.job = job;
      slot.timer = setTimeout(() => this.fail(slot, timeoutError(this.timeoutMs)), this.timeoutMs);
      slot.worker.postMessage({
        id: job.id,
        html: job.html,
        url: job.url,
        want: job.want,
        scope: job.scope,
      });
    }
  }

  private spawn(): Slot {
    // A page that would need more heap than this (a pathological document) ends its thread, not the process.
    const worker = new Worker(new URL('./convert-worker.ts', import.meta.url), {
      resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB },
    });
    const slot: Slot = { worker, ready: false, job: null, timer: null };
    worker.on('message', (m: { ready?: true; id: number; digest?: PageDigest; error?: string }) => {
      if (m.ready) {
        slot.ready = true;
        return this.dispatch();
      }
      const job = slot.job;
      if (!job || job.id !== m.id) return;
      this.release(slot);
      if (m.digest) job.resolve(m.digest);
      else job.reject(new PageFailure(`Conversion failed: ${m.error ?? 'unknown error'}.`));
      this.dispatch();
    });
    worker.on('error', (err) => this.fail(slot, err));
    worker.on('exit', () => {
      if (slot.job) this.fail(slot, new Error('The conversion thread stopped.'));
    });
    this.slots.push(slot);
    return slot;
  }

  private release(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    slot.job = null;
  }

  // The thread is ended (a conversion stuck in a pathological page cannot be interrupted otherwise) and
  // its place freed for a new one.
  private fail(slot: Slot, err: Error): void {
    const job = slot.job;
    this.release(slot);
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    void this.end(slot);
    job?.reject(err);
    // A thread that could not even start would fail the same way again: the waiting pages fail with it.
    if (!slot.ready) for (const waiting of this.waiting.splice(0)) waiting.reject(err);
    else if (!this.closed) this.dispatch();
  }

  private async end(slot: Slot): Promise<void> {
    slot.worker.removeAllListeners('exit');
    await slot.worker.terminate();
  }
}

function timeoutError(ms: number): PageFailure {
  return new PageFailure(`Timeout: converting the page took over ${ms / 1000} s.`);
}
