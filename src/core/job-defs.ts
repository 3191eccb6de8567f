import type { z } from 'zod';

// What a background job is (defineJob) and what its handler receives; the queue that runs them is
// src/core/jobs.ts, which re-exports these.

export type JobContext<C = unknown> = {
  id: string;
  retryCount: number;
  /** What the process bound with JobQueue.bind() (the app's Deps); a job names only what it uses. */
  deps: C;
  /**
   * Aborted when the handler runs past the job's expireInSeconds: a handler running a child process
   * (ffmpeg, a browser) kills it, so nothing outlives the job. Absent when a test calls handle() itself.
   */
  signal?: AbortSignal;
};

/** One job of a batch handed to handleMany. */
export type BatchJob<T> = { id: string; retryCount: number; data: T };

export type JobDef<S extends z.ZodType = z.ZodType, N extends string = string, C = unknown> = {
  name: N;
  schema: S;
  // Method syntax on purpose: it lets a list of jobs with different payloads share one JobDef[] type.
  /** Runs one job (give handle or handleMany). */
  handle?(data: z.output<S>, ctx: JobContext<C>): Promise<void>;
  /**
   * Runs a whole batch: the worker claims up to batchSize jobs of this kind in one statement and polls
   * again at once while it finds work. The batch completes when this resolves and fails (with pg-boss
   * retries) when it throws, so settle each job's own failures inside.
   */
  handleMany?(jobs: BatchJob<z.output<S>>[], ctx: { deps: C }): Promise<void>;
  /**
   * handleMany kinds only. 'complete' (default): claimed jobs go `active` and are completed (or failed and
   * retried) after the handler. 'delete': the claim deletes them (pg-boss's fetch and deleteJob in one
   * transaction) — no completion afterwards, but a process dying mid-batch loses the batch's jobs, so
   * only for kinds whose own rows let a sweeper re-queue the work (mail.deliver; docs/decisions/023, 041).
   */
  consume?: 'complete' | 'delete';
  /**
   * When this kind's jobs that are not due yet become due, read from the kind's own rows when workers
   * start. Inserts announce their due times to running workers (NOTIFY), but a process that starts later
   * has not heard them, and the queue reads no due times from pg-boss's tables (decision 041): without
   * this, such a job waits for the fallback poll (pollingIntervalSeconds).
   */
  dueTimes?(deps: C): Promise<Date[]>;
  /** Only started by a schedule: its workers poll every 5 s instead of every pollingIntervalSeconds. */
  cronOnly?: boolean;
  retry?: { limit: number; delaySec: number; backoff?: boolean };
  /** How many of this job one worker process runs at once. */
  concurrency?: number;
  /**
   * Jobs fetched per poll and run together (default 1). Fetching and completing in batches saves queue
   * round trips for many small jobs; the handler should settle failures itself, since a throw fails the
   * whole batch.
   */
  batchSize?: number;
  expireInSeconds?: number;
};

/** Keeps the job's literal name, so a registry derived from a list of jobs knows each name's payload. */
export function defineJob<const N extends string, S extends z.ZodType, C = unknown>(
  def: JobDef<S, N, C>,
): JobDef<S, N, C> {
  return def;
}

export type EnqueueOptions = { startAfter?: Date; singletonKey?: string; id?: string };

/** A job for JobQueue.insert(); `id` lets the caller store the job's id beside its own rows. */
export type NewJob<K extends string = string, T = unknown> = {
  name: K;
  data: T;
  id?: string;
  startAfter?: Date | null;
};
