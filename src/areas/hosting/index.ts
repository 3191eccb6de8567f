import type { PayloadOf } from '../../core/jobs.ts';
import { defineArea } from '../manifest.ts';
import { getAppRuntimeForCli } from './app-runtime-info-fn.ts';
import { listBuildSecretsForCli, setSecretBuildForCli } from './build-secrets-fn.ts';
import {
  createDeploymentFn,
  createDeploymentForCli,
  getAppLogsForCli,
  getDeploymentFn,
  getDeploymentForCli,
  listDeploymentsForCli,
  startDeploymentFn,
  startDeploymentForCli,
} from './deployments-fn.ts';
import { hostingCatalogue } from './errors.ts';
import { checkKubernetesRegions, watchKubeCrashes } from './kubernetes/deploy.ts';
import { provisionProject } from './project-hosting.ts';
import { destroyProjectForCli } from './project-hosting-fn.ts';
import { redeployDeploymentForCli, rollbackDeploymentForCli } from './releases-fn.ts';
import { restartAppForCli } from './restart-fn.ts';
import { deployJob } from './runtime/deploy-job.ts';
import { announceSecretChanges, startHostingRuntime } from './runtime/runtime.ts';

// App hosting: a project's database and hostname, deployments (upload, build, health check, go live), the
// local runtime driver that runs apps, and the host router that serves them at <slug>.APPS_DOMAIN.

export const hostingArea = defineArea({
  name: 'hosting',
  errors: [hostingCatalogue],
  fns: [
    destroyProjectForCli,
    createDeploymentForCli,
    startDeploymentForCli,
    getDeploymentForCli,
    listDeploymentsForCli,
    getAppLogsForCli,
    restartAppForCli,
    rollbackDeploymentForCli,
    redeployDeploymentForCli,
    getAppRuntimeForCli,
    setSecretBuildForCli,
    listBuildSecretsForCli,
    createDeploymentFn,
    startDeploymentFn,
    getDeploymentFn,
  ],
  jobs: [deployJob],
  migrations: [{ area: 'hosting', schema: ['src/areas/hosting/runtime/tables.ts'] }],
  // The runtime (router role) is up before the job workers, so deploy jobs find it.
  start: async (deps, { router }) => {
    checkKubernetesRegions(deps);
    announceSecretChanges(deps);
    const stopCrashWatch = watchKubeCrashes(deps);
    if (!router) return async () => stopCrashWatch();
    const runtime = await startHostingRuntime(deps);
    return () => {
      stopCrashWatch();
      return runtime.stop();
    };
  },
  provides: { provisionProject },
  // The partner functions (createDeployment, startDeployment, getDeployment) are tools for a platform
  // credential with the deploy scope only (src/areas/mcp/access.ts).
});

// Its jobs' payloads, so deps.jobs.enqueue(name, payload) type-checks anywhere (docs/areas.md).
declare module '../../core/jobs.ts' {
  interface JobPayloads {
    'hosting.deploy': PayloadOf<typeof deployJob>;
  }
}

export { buildFailureReason } from './runtime/build-errors.ts';
export { interceptConnections } from './runtime/connection-handoff.ts';
export { firstErrorLine, stripAnsi } from './runtime/error-line.ts';
export { appSlugFromHost, type HostRouter, notFoundPage } from './runtime/host-router.ts';
export { type HostingRuntime, hostingRuntime } from './runtime/runtime.ts';
