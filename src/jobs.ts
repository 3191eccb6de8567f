import type { JobDef } from './core/jobs.ts';

// The typed registry of every background job; areas add their defineJob()s here.
export const jobDefs: JobDef[] = [];

export type JobRegistry = Record<string, unknown>;
