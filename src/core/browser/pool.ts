import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { ApiError } from '../errors.ts';
import type { OutboundAllow } from '../net/outbound-allow.ts';
import { browserErrors } from './errors.ts';
import { type GuardLog, installGuard, newGuardLog } from './guard.ts';
import { killGroup, launchChromium } from './launch.ts';

// One Chromium per process, shared by everything that renders pages (screenshots, extraction of JavaScript
// pages). Started on first use. Each use gets its own browser context (cookies, storage and cache die with
// it; service workers are blocked) behind the SSRF guard, inside a cap on concurrent pages and a deadline.
// A browser is retired after `recycleAfter` pages or when a page crashes, and closed once its last page is
// done; a browser that dies is dropped and its process group killed. close() ends them all.

export type BrowserPoolOptions = {
  executablePath: string;
  /** Pages open at once; further callers wait their turn. */
  maxPages: number;
  /** Pages one browser serves before a fresh one takes over. */
  recycleAfter: number;
  /** Deadline for one use of a page, navigation and capture included. */
  pageTimeoutMs: number;
  outboundAllow: OutboundAllow;
  /** Largest body one sub-request may bring in (default 20 MiB). */
  maxResourceBytes?: number;
};

export type PageOptions = Pick<
  BrowserContextOptions,
  'viewport' | 'userAgent' | 'deviceScaleFactor' | 'isMobile' | 'hasTouch' | 'colorScheme'
> & {
  /** Requests to drop before they are fetched (ad blocking). */
  blockRequest?: (url: string, resourceType: string) => boolean;
  signal?: AbortSignal;
};

type Slot = { browser: Browser; pid: number; used: number; active: number; retired: boolean };

export class BrowserPool {
  private current: Slot | undefined;
  private launching: Promise<Slot> | undefined;
  private readonly slots = new Set<Slot>();
  private readonly everPids: number[] = [];
  private active = 0;
  private readonly queue: (() => void)[] = [];
  private closed = false;
  private readonly onExit = () => {
    for (const s of this.slots) killGroup(s.pid);
  };

  readonly opts: BrowserPoolOptions;

  constructor(opts: BrowserPoolOptions) {
    this.opts = opts;
    // If Pier itself exits without a shutdown, its browsers go with it.
    process.once('exit', this.onExit);
  }

  /** Runs `fn` on a fresh page behind the guard; the page and its context are gone when it returns. */
  async withPage<T>(o: PageOptions, fn: (page: Page, log: GuardLog) => Promise<T>): Promise<T> {
    if (this.closed) throw browserErrors.browserClosed();
    await this.acquire(o.signal);
    let slot: Slot | undefined;
    try {
      slot = await this.slot();
      slot.used++;
      slot.active++;
      if (slot.used >= this.opts.recycleAfter) this.retire(slot);
      return await this.run(slot, o, fn);
    } finally {
      if (slot) {
        slot.active--;
        if (slot.retired && slot.active === 0) void this.closeSlot(slot);
      }
      this.release();
    }
  }

  private async run<T>(slot: Slot, o: PageOptions, fn: (page: Page, log: GuardLog) => Promise<T>) {
    const { blockRequest, signal, ...ctxOpts } = o;
    let ctx: BrowserContext | undefined;
    let crashed = false;
    // A crashed page fails its work at once rather than at the deadline: Playwright calls on a crashed page
    // (a wait, an evaluate) may otherwise hang until the page timeout.
    let onCrash: (err: Error) => void = () => undefined;
    const crash = new Promise<never>((_, reject) => {
      onCrash = reject;
    });
    crash.catch(() => undefined);
    // The deadline covers everything, opening the context included: a wedged browser must not hold a job.
    const work = (async () => {
      ctx = await slot.browser.newContext({ ...ctxOpts, serviceWorkers: 'block', acceptDownloads: false });
      const log = newGuardLog();
      await installGuard(
        ctx,
        {
          outboundAllow: this.opts.outboundAllow,
          timeoutMs: this.opts.pageTimeoutMs,
          maxBytes: this.opts.maxResourceBytes ?? 20 * 1024 * 1024,
          blockRequest,
        },
        log,
      );
      const page = await ctx.newPage();
      page.on('crash', () => {
        crashed = true;
        // A crash may be the browser's fault as much as the page's: the next pages get a fresh browser.
        this.retire(slot);
        onCrash(browserErrors.pageCrashed());
      });
      return fn(page, log);
    })();
    work.catch(() => undefined);
    try {
      return await deadline(Promise.race([work, crash]), this.opts.pageTimeoutMs, signal);
    } catch (err) {
      if (crashed) throw browserErrors.pageCrashed();
      if (!slot.browser.isConnected())
        throw browserErrors.pageFailed('The browser stopped while rendering the page.');
      throw err;
    } finally {
      // Closing the context ends whatever the page still does (a timed-out navigation included). A context
      // that does not close, or never opened, means a wedged browser: it is retired and killed.
      const open = ctx;
      const closed = open
        ? await Promise.race([
            open.close().then(
              () => true,
              () => true,
            ),
            sleep(5000).then(() => false),
          ])
        : false;
      if (!closed) this.retire(slot);
    }
  }

  /** Process ids of every browser this pool started (tests check that none is left). */
  launchedPids(): readonly number[] {
    return this.everPids;
  }

  /** Closes every browser; pending and later uses fail with BROWSER_UNAVAILABLE. */
  async close(): Promise<void> {
    this.closed = true;
    for (const wake of this.queue.splice(0)) wake();
    const launching = this.launching;
    if (launching) await launching.catch(() => undefined);
    await Promise.all([...this.slots].map((s) => this.closeSlot(s)));
    process.removeListener('exit', this.onExit);
  }

  private async slot(): Promise<Slot> {
    if (this.current && !this.current.retired) return this.current;
    this.launching ??= this.launch().finally(() => {
      this.launching = undefined;
    });
    return this.launching;
  }

  private async launch(): Promise<Slot> {
    let launched: Awaited<ReturnType<typeof launchChromium>>;
    try {
      launched = await launchChromium(this.opts.executablePath);
    } catch (err) {
      throw browserErrors.browserUnavailable(firstLine(err));
    }
    const slot: Slot = { ...launched, used: 0, active: 0, retired: false };
    this.everPids.push(slot.pid);
    this.slots.add(slot);
    slot.browser.on('disconnected', () => {
      this.retire(slot);
      killGroup(slot.pid);
      this.slots.delete(slot);
    });
    if (this.closed) {
      await this.closeSlot(slot);
      throw browserErrors.browserClosed();
    }
    this.current = slot;
    return slot;
  }

  private retire(slot: Slot) {
    slot.retired = true;
    if (this.current === slot) this.current = undefined;
  }

  private async closeSlot(slot: Slot): Promise<void> {
    this.retire(slot);
    this.slots.delete(slot);
    await Promise.race([slot.browser.close().catch(() => undefined), sleep(5000)]);
    // Whatever close() left (a hung browser, an orphaned helper) goes with the group.
    killGroup(slot.pid);
  }

  private acquire(signal?: AbortSignal): Promise<void> {
    if (this.active < this.opts.maxPages) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const wake = () => {
        signal?.removeEventListener('abort', onAbort);
        if (this.closed) return reject(browserErrors.browserClosed());
        this.active++;
        resolve();
      };
      const onAbort = () => {
        const i = this.queue.indexOf(wake);
        if (i >= 0) this.queue.splice(i, 1);
        reject(browserErrors.pageFailed('The page was cancelled before it started.'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(wake);
    });
  }

  private release() {
    this.active--;
    const next = this.queue.shift();
    if (next) next();
  }
}

function deadline<T>(p: Promise<T>, ms: number, signal?: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(browserErrors.pageTimeout(ms)), ms);
    const onAbort = () => reject(browserErrors.pageFailed('The page was cancelled.'));
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    });
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

function firstLine(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  return String((err as Error)?.message ?? err)
    .split('\n')[0]!
    .slice(0, 200);
}
