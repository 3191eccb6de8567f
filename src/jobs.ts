import type { JobDef } from './core/jobs.ts';
import { deployJob } from './platform/runtime/deploy-job.ts';

// The typed registry of every background job; areas add their defineJob()s here.
export const jobDefs: JobDef[] = [deployJob as JobDef];

export type JobRegistry = Record<string, unknown>;
