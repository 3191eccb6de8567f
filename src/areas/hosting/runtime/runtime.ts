import path from 'node:path';
import { listen, notify } from '../../../core/db/notify.ts';
import type { Deps } from '../../../deps.ts';
import { onSecretsChanged } from '../../orgs/index.ts';
import { recoverLiveApps } from '../deploy-pipeline.ts';
import { restartKubeApp } from '../kubernetes/deploy.ts';
import { AppDbServers } from './app-databases.ts';
import { AppLogWriter } from './app-logs.ts';
import { type CgroupMode, describeCgroups, detectCgroups } from './cgroups.ts';
import { type DiskQuotaMode, detectDiskQuota } from './disk-quota.ts';
import { HostRouter } from './host-router.ts';
import { isRoot, sandboxProblem } from './sandbox.ts';
import { Supervisor } from './supervisor.ts';

// The hosting runtime of one node (the `router` role): the supervisor of its app processes, the PGlite
// servers of their databases, the log writer and the host router. It is per-node state rebuilt from the
// database on start; other nodes reach it through Postgres NOTIFY on one channel.

const CHANNEL = 'pier_hosting';
type HostingMessage = { op: 'restart' | 'stop'; projectId: string };

export type HostingRuntime = {
  /** The cgroups in force when apps run sandboxed; null when APP_SANDBOX=off. */
  sandbox: CgroupMode | null;
  /** How /data's size is bounded (decision 068); null when APP_SANDBOX=off. */
  disk: DiskQuotaMode | null;
  supervisor: Supervisor;
  dbs: AppDbServers;
  logs: AppLogWriter;
  router: HostRouter;
  /** Resolves when the apps that were live before the start are back (or failed to come back). */
  recovered: Promise<void>;
  stop(): Promise<void>;
};

const runtimes = new WeakMap<Deps, HostingRuntime>();

/** The runtime started in this process for these deps, if any. */
export function hostingRuntime(deps: Deps): HostingRuntime | undefined {
  return runtimes.get(deps);
}

/** Tells every node running the project's app to restart it (new environment) or stop it. */
export async function signalApp(deps: Deps, msg: HostingMessage): Promise<void> {
  // Kubernetes regions: the cluster rolls the pods; no node of Pier runs the app.
  if (msg.op === 'restart' && (await restartKubeApp(deps, msg.projectId))) return;
  await notify(deps.db, CHANNEL, JSON.stringify(msg));
}

/** Every role: secrets changes are announced so the node running the app restarts it. */
export function announceSecretChanges(deps: Deps): void {
  onSecretsChanged(deps, (projectId) => {
    void signalApp(deps, { op: 'restart', projectId }).catch((err) =>
      deps.log.error({ err, projectId }, 'could not announce a secrets change'),
    );
  });
}

/**
 * Checks the sandbox by running one (the hosting role refuses to start without it) and picks the cgroups; says
 * in the log which limits are in force. Null when the operator turned the sandbox off.
 */
function appSandbox(deps: Deps): CgroupMode | null {
  if (!deps.config.appSandbox) {
    deps.log.warn(
      "APP_SANDBOX=off: hosted apps run unsandboxed as Pier's own user and can read DATA_DIR, including secret.key",
    );
    return null;
  }
  const problem = sandboxProblem(path.join(deps.config.dataDir, 'apps', '.sandbox-check'));
  if (problem) throw new Error(problem);
  const cgroups = detectCgroups();
  deps.log.info(
    `app sandbox on (bubblewrap); network: a namespace of its own per app (slirp4netns, no host loopback; private ranges and the host's own addresses unreachable, decision 082${
      isRoot() ? '' : "; Pier is not root: made in a user namespace of Pier's uid, decision 091"
    }); limits: ${describeCgroups(cgroups)}`,
  );
  return cgroups;
}

/** Starts the runtime of this node: recovers its live apps and listens for restarts and stops. */
export async function startHostingRuntime(deps: Deps): Promise<HostingRuntime> {
  const sandbox = appSandbox(deps);
  const disk = sandbox ? detectDiskQuota() : null;
  if (disk)
    deps.log.info(
      disk.kind === 'image'
        ? 'app disk quota: a loop-mounted ext4 image per app (writes past it get ENOSPC)'
        : `app disk quota: usage check every 30 s (${disk.why}); an app over it is stopped`,
    );
  const dbs = new AppDbServers(deps);
  const logs = new AppLogWriter(deps);
  const handoff = deps.config.appConnectionHandoff;
  const supervisor = new Supervisor(deps, dbs, logs, {
    healthTimeoutMs: deps.config.appHealthTimeoutMs,
    handoff,
    sandbox,
    disk,
  });
  const router = new HostRouter(deps.config.appsDomain, (slug) => supervisor.lookup(slug), {
    tls: deps.config.publicUrl.startsWith('https:'),
    handoff,
  });
  const unlisten = await listen(deps.db, deps.config.databaseUrl, CHANNEL, (payload) => {
    let msg: HostingMessage;
    try {
      msg = JSON.parse(payload) as HostingMessage;
    } catch {
      return;
    }
    const run =
      msg.op === 'restart'
        ? supervisor.restart(msg.projectId)
        : supervisor.stop(msg.projectId).then(() => dbs.close(msg.projectId));
    run.catch((err) => deps.log.error({ err, projectId: msg.projectId }, `app ${msg.op} failed`));
  });
  // Embedded mode: have the PGlite template ready before the first app of a new project starts.
  if (!deps.config.databaseUrl)
    void dbs.template().catch((err) => deps.log.warn({ err }, 'could not prepare the PGlite template'));
  const recovered = recoverLiveApps(deps, supervisor).catch((err) =>
    deps.log.error({ err }, 'recovering live apps failed'),
  );
  const rt: HostingRuntime = {
    sandbox,
    disk,
    supervisor,
    dbs,
    logs,
    router,
    recovered,
    stop: async () => {
      runtimes.delete(deps);
      await unlisten();
      await recovered;
      await supervisor.close();
      await logs.close();
      await dbs.closeAll();
    },
  };
  runtimes.set(deps, rt);
  return rt;
}
