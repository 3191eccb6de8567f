import { z } from 'zod';
import { defineJob } from '../../core/jobs.ts';

// Listed in src/jobs.ts so any node can enqueue it; the hosting runtime swaps in the real handler.
export const deployPayload = z.object({ deploymentId: z.string() });

/** The job as registered on every node; a node without the runtime cannot start apps and lets it retry. */
export const deployJob = defineJob({
  name: 'hosting.deploy',
  schema: deployPayload,
  retry: { limit: 3, delaySec: 5 },
  expireInSeconds: 180,
  concurrency: 2,
  handle: async () => {
    throw new Error('This node runs no hosting runtime (role router); the deploy waits for one that does.');
  },
});
