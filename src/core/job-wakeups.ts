import type { Queryable } from './db/client.ts';

// How the job queue's idle workers (src/core/jobs.ts) sleep and wake. Every insert NOTIFYs its job's kind on
// JOBS_CHANNEL (at commit when inside a transaction), with the due time of jobs due later; each process
// hears it and wakes its idle workers of that kind at once, or when the job is due, and otherwise lets them
// sleep until the fallback poll.

/** The channel on which inserts announce a job kind; every worker process of the database listens. */
export const JOBS_CHANNEL = 'pier_jobs';
/** An idle worker's nap when a job is due but was not claimable (another worker holds it). */
const BUSY_RETRY_MS = 250;
/** A worker due to wake this little after a new job's due time is left asleep (clocks round). */
const WAKE_SLACK_MS = 100;
/** A due time told of is retried this long after it passed (the database's clock may run a little behind). */
const DUE_GRACE_MS = 1000;
/** Distinct later due times one insert announces per kind. */
const ANNOUNCED_PER_KIND = 100;
/** Due times remembered per kind; later ones are left to the fallback poll. */
const MAX_DUE_TIMES = 1000;

/** A running worker loop: the earliest job announced since its last claim, and while it sleeps, until when. */
export type Worker = {
  announced: number;
  until: number;
  wake: (() => void) | null;
  /** While it sleeps: wakes it at `at` (epoch ms) instead of when it meant to. */
  rearm: ((at: number) => void) | null;
};

/** This process's idle workers per kind, and the due times announced to it. */
export class Wakeups {
  /** Each kind's running workers, so a NOTIFY reaches them whether they sleep or are claiming. */
  readonly #workers = new Map<string, Set<Worker>>();
  /** Per kind, the future due times announced to this process (sorted), for idle workers' naps. */
  readonly #due = new Map<string, number[]>();
  readonly #stopping: () => boolean;

  /** `stopping`: the queue is stopping, so a worker about to nap returns at once instead. */
  constructor(stopping: () => boolean) {
    this.#stopping = stopping;
  }

  /** A worker loop of a kind starts: wake-ups of the kind reach it until it leaves. */
  join(name: string): Worker {
    const me: Worker = { announced: Number.POSITIVE_INFINITY, until: 0, wake: null, rearm: null };
    const workers = this.#workers.get(name) ?? new Set();
    this.#workers.set(name, workers);
    workers.add(me);
    return me;
  }

  leave(name: string, me: Worker): void {
    this.#workers.get(name)?.delete(me);
  }

  /** A NOTIFY on JOBS_CHANNEL: '<kind>' for jobs due now, '<kind>@<epoch ms>' for jobs due later. */
  heard(payload: string): void {
    const at = payload.lastIndexOf('@');
    if (at === -1) this.wake(payload);
    else this.wake(payload.slice(0, at), Number(payload.slice(at + 1)));
  }

  /** Stop: every worker of every kind claims once more, finds the queue stopping and ends. */
  wakeAll(): void {
    for (const name of this.#workers.keys()) this.wake(name);
  }

  /**
   * How long an idle worker sleeps: until the next due time its kind was told of (NOTIFY), at most the
   * fallback (ms). A due time just passed whose job it did not get (another worker did, or the database's
   * clock is a little behind) is tried again every BUSY_RETRY_MS for DUE_GRACE_MS.
   */
  idleMs(name: string, fallback: number): number {
    const due = this.#due.get(name);
    if (!due) return fallback;
    const now = Date.now();
    while (due.length && due[0]! + DUE_GRACE_MS < now) due.shift();
    if (!due.length) return fallback;
    return Math.min(fallback, Math.max(BUSY_RETRY_MS, due[0]! - now));
  }

  /** Remembers a kind's future due time (kept sorted, at most MAX_DUE_TIMES). */
  remember(name: string, at: number): void {
    if (at <= Date.now()) return;
    let due = this.#due.get(name);
    if (!due) {
      due = [];
      this.#due.set(name, due);
    }
    let i = due.length;
    while (i > 0 && due[i - 1]! > at) i--;
    if (due[i - 1] === at) return;
    due.splice(i, 0, at);
    if (due.length > MAX_DUE_TIMES) due.pop();
  }

  /** An idle worker naps for `ms`, unless the queue is stopping; a wake-up of its kind ends the nap. */
  sleep(me: Worker, ms: number): Promise<void> {
    if (this.#stopping()) return Promise.resolve();
    return new Promise<void>((resolve) => {
      let timer = setTimeout(() => me.wake?.(), ms);
      me.until = Date.now() + ms;
      me.wake = () => {
        clearTimeout(timer);
        me.wake = null;
        me.rearm = null;
        resolve();
      };
      me.rearm = (at) => {
        clearTimeout(timer);
        timer = setTimeout(() => me.wake?.(), Math.max(0, at - Date.now()));
        me.until = at;
      };
    });
  }

  /**
   * A NOTIFY for a kind (or stop): its idle workers claim again. A job due later (`due`, epoch ms) is
   * remembered, and workers that would sleep past it are set to wake when it is due, without claiming
   * before: a burst of scheduled jobs costs idle workers nothing.
   */
  wake(name: string, due?: number): void {
    const at = due === undefined || Number.isNaN(due) ? 0 : due;
    const later = at > Date.now();
    if (later) this.remember(name, at);
    for (const w of this.#workers.get(name) ?? []) {
      w.announced = Math.min(w.announced, at);
      if (!w.wake || at + WAKE_SLACK_MS >= w.until) continue;
      if (later) w.rearm?.(at);
      else w.wake();
    }
  }
}

/**
 * NOTIFYs the kinds just queued: a kind's name when a job of it is due now, and each distinct later due
 * time (the earliest ANNOUNCED_PER_KIND of them; later ones are left to the fallback poll). Inside a
 * transaction Postgres delivers them at commit, never on rollback.
 */
export async function announceJobs(
  runner: Queryable,
  jobs: { name: string; startAfter?: Date | null }[],
): Promise<void> {
  const now = Date.now();
  const byKind = new Map<string, Set<number>>();
  for (const j of jobs) {
    const due = j.startAfter?.getTime() ?? 0;
    const times = byKind.get(j.name) ?? new Set();
    byKind.set(j.name, times);
    times.add(due > now ? due : 0);
  }
  const payloads: string[] = [];
  for (const [name, times] of byKind) {
    const sorted = [...times].sort((a, b) => a - b).slice(0, ANNOUNCED_PER_KIND);
    for (const due of sorted) payloads.push(due ? `${name}@${due}` : name);
  }
  if (payloads.length)
    await runner.query('SELECT pg_notify($1, n) FROM unnest($2::text[]) AS n', [JOBS_CHANNEL, payloads]);
}
