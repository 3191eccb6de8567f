import { z } from 'zod';
import { defineJob } from '../../../core/jobs.ts';
import type { Deps } from '../../../deps.ts';
import { runDeployment } from '../deploy-pipeline.ts';
import { runKubeDeployment } from '../kubernetes/deploy.ts';
import { hostingRuntime } from './runtime.ts';

// Start a checked release beside the live one, health-check it and switch. It needs the node's hosting
// runtime (router role), so the local driver runs worker and router in one process; elsewhere it retries.
export const deployJob = defineJob({
  name: 'hosting.deploy',
  schema: z.object({ deploymentId: z.string() }),
  retry: { limit: 3, delaySec: 5 },
  // A source-only release is built inside the job (the plan's build time, at most 1800 s) before it starts.
  expireInSeconds: 2400,
  concurrency: 2,
  handle: async ({ deploymentId }, { deps }: { deps: Deps }) => {
    // A project in a Kubernetes region deploys from any worker: it only talks to the cluster's API.
    if (await runKubeDeployment(deps, deploymentId)) return;
    const rt = hostingRuntime(deps);
    if (!rt)
      throw new Error('This node runs no hosting runtime (role router); the deploy waits for one that does.');
    await runDeployment(deps, rt.supervisor, deploymentId);
  },
});
