import type { JobDef } from './core/jobs.ts';
import type { Deps } from './deps.ts';
import { type MemoryJobPayloads, memoryJobs } from './v1/memory/worker.ts';

// The typed registry of every background job; areas add their defineJob()s here. Handlers get the
// process's Deps through the factory.
export function jobDefs(deps: Deps): JobDef[] {
  return [...memoryJobs(deps)];
}

export type JobRegistry = MemoryJobPayloads;
