import path from 'node:path';
import { and, eq } from 'drizzle-orm';
import { Pool } from 'undici';
import type { Deps } from '../../../deps.ts';
import { orgs, PLANS, projectSecretEnv, projects } from '../../orgs/index.ts';
import { type AppDbServers, projectDir, projectRunDir } from './app-databases.ts';
import type { AppLogWriter } from './app-logs.ts';
import { buildRelease } from './build-release.ts';
import { markedBuildKeys } from './build-secrets.ts';
import type { CgroupMode } from './cgroups.ts';
import { type DiskQuotaMode, folderBytes, mountDataImage, unmountDataImage } from './disk-quota.ts';
import { firstErrorLine } from './error-line.ts';
import { type AppSpec, type Instance, type NodeInstance, retireInstance, watchHandoff } from './instances.ts';
import { spawnApp, waitHealthy } from './local-driver.ts';
import { allowedCidrs } from './netns-routes.ts';
import { retryableSandboxFailure } from './sandbox.ts';
import { type AppManifest, deployments } from './tables.ts';

// Per-node state of the running apps, rebuilt from the database on start. A new version (a deploy, a secrets
// change, a crash restart) is started beside the current one, health-checked, then swapped in; the old one
// gets its in-flight requests finished before it is stopped, so no request fails during a switch.

type Slot = {
  spec: AppSpec;
  current: Instance | null;
  crashes: number;
  /** When the app exited (or failed to start again) lately, for the crash-loop rule. */
  exits: number[];
  restartTimer: NodeJS.Timeout | null;
  chain: Promise<unknown>;
  stopped: boolean;
};

const DRAIN_MS = 10_000;
/**
 * The crash-loop rule (docs/decisions/069): CRASH_LIMIT exits within CRASH_WINDOW_MS end the deployment as
 * `crashed`; restarts stop and the reason is kept until a new deploy or `pier restart`.
 */
export const CRASH_LIMIT = 5;
export const CRASH_WINDOW_MS = 10 * 60_000;

export class Supervisor {
  readonly #deps: Deps;
  readonly #dbs: AppDbServers;
  readonly #logs: AppLogWriter;
  readonly #healthTimeoutMs: number;
  readonly #handoff: boolean;
  readonly #sandbox: CgroupMode | null;
  readonly #disk: DiskQuotaMode | null;
  /** Projects whose /data is a mounted image; the others (fallback) get the usage check. */
  readonly #mounted = new Set<string>();
  readonly #diskTimer: NodeJS.Timeout;
  readonly #bySlug = new Map<string, Slot>();
  readonly #byProject = new Map<string, Slot>();
  #closed = false;

  constructor(
    deps: Deps,
    dbs: AppDbServers,
    logs: AppLogWriter,
    /** sandbox: the cgroups in use when apps run sandboxed; null runs them unsandboxed (APP_SANDBOX=off). */
    opts: {
      healthTimeoutMs: number;
      handoff: boolean;
      sandbox?: CgroupMode | null;
      /** How /data's size is bounded (decision 068); null with the sandbox off. */
      disk?: DiskQuotaMode | null;
      diskCheckMs?: number;
    },
  ) {
    this.#sandbox = opts.sandbox ?? null;
    this.#disk = opts.disk ?? null;
    this.#diskTimer = setInterval(() => this.#checkDisks(), opts.diskCheckMs ?? 30_000);
    this.#diskTimer.unref();
    this.#deps = deps;
    this.#dbs = dbs;
    this.#logs = logs;
    this.#healthTimeoutMs = opts.healthTimeoutMs;
    this.#handoff = opts.handoff;
  }

  /** What serves this slug right now (the host router's lookup; synchronous and cheap). */
  lookup(slug: string): Instance | null {
    return this.#bySlug.get(slug)?.current ?? null;
  }

  runningDeployment(projectId: string): string | null {
    return this.#byProject.get(projectId)?.current?.deploymentId ?? null;
  }

  #serial<T>(slot: Slot, fn: () => Promise<T>): Promise<T> {
    const run = slot.chain.then(fn, fn);
    slot.chain = run.catch(() => {});
    return run;
  }

  #slot(projectId: string, spec?: AppSpec): Slot | undefined {
    let slot = this.#byProject.get(projectId);
    if (!slot && spec) {
      slot = {
        spec,
        current: null,
        crashes: 0,
        exits: [],
        restartTimer: null,
        chain: Promise.resolve(),
        stopped: false,
      };
      this.#byProject.set(projectId, slot);
    }
    return slot;
  }

  /** Starts this version beside the current one and swaps it in once healthy; throws the reason otherwise. */
  activate(spec: AppSpec): Promise<void> {
    const slot = this.#slot(spec.projectId, spec)!;
    return this.#serial(slot, async () => {
      const inst = await this.#start(spec);
      slot.stopped = false;
      slot.spec = spec;
      slot.crashes = 0;
      slot.exits = [];
      this.#swap(slot, inst);
    });
  }

  /** Writes the buffered log lines, so a deployment's own lines are readable before its end is recorded. */
  flushLogs(): Promise<void> {
    return this.#logs.flush();
  }

  /** Rolling restart with a fresh environment (secrets changed); a no-op when nothing runs here. */
  restart(projectId: string): Promise<void> {
    const slot = this.#slot(projectId);
    if (!slot || slot.stopped) return Promise.resolve();
    return this.#serial(slot, async () => {
      if (slot.stopped || slot.spec.manifest.type === 'static') return;
      const inst = await this.#start(slot.spec);
      this.#swap(slot, inst);
    });
  }

  /** Stops the project's app and forgets it (destroy, or this node no longer runs it). */
  stop(projectId: string): Promise<void> {
    const slot = this.#slot(projectId);
    if (!slot) return Promise.resolve();
    return this.#serial(slot, async () => {
      slot.stopped = true;
      if (slot.restartTimer) clearTimeout(slot.restartTimer);
      const old = slot.current;
      slot.current = null;
      if (this.#bySlug.get(slot.spec.slug) === slot) this.#bySlug.delete(slot.spec.slug);
      this.#byProject.delete(projectId);
      if (old) await retireInstance(old, 0);
      this.#unmount(projectId);
    });
  }

  async #env(projectId: string): Promise<Record<string, string>> {
    const secrets = await projectSecretEnv(this.#deps, projectId);
    return {
      ...secrets,
      DATABASE_URL: await this.#dbs.urlFor(projectId, { sandboxed: this.#sandbox !== null }),
    };
  }

  /**
   * Builds a source-only release in place (build-release.ts); returns its manifest completed (static root,
   * build time, build-time keys). Throws the reason when the build fails; the live version is not touched.
   */
  async build(spec: Pick<AppSpec, 'projectId' | 'deploymentId' | 'dir' | 'manifest'>): Promise<AppManifest> {
    const plan = await this.#plan(spec.projectId);
    return buildRelease({
      projectId: spec.projectId,
      dir: spec.dir,
      projectDir: projectDir(this.#deps, spec.projectId),
      manifest: spec.manifest,
      secrets: await projectSecretEnv(this.#deps, spec.projectId),
      buildKeys: await markedBuildKeys(this.#deps, spec.projectId),
      app: plan.app,
      build: plan.build,
      memoryOverrideMb: this.#deps.config.buildMemoryMb,
      timeoutCeilingMs: this.#deps.config.buildTimeoutMs,
      cgroups: this.#sandbox,
      outboundAllow: allowedCidrs(this.#deps.config.outboundAllow),
      log: (stream, line) => this.#logs.write(spec.projectId, spec.deploymentId, stream, line, 'build'),
    });
  }

  /** The limits of the plan of the project's organization. */
  async #limits(projectId: string) {
    return (await this.#plan(projectId)).app;
  }

  async #plan(projectId: string) {
    const [row] = await this.#deps.db.orm
      .select({ plan: orgs.plan })
      .from(projects)
      .innerJoin(orgs, eq(orgs.id, projects.orgId))
      .where(eq(projects.id, projectId));
    return PLANS[row?.plan ?? 'free'];
  }
  async #start(spec: AppSpec, retried = false): Promise<Instance> {
    if (spec.manifest.type === 'static')
      return {
        kind: 'static',
        deploymentId: spec.deploymentId,
        root: path.join(spec.dir, spec.manifest.root ?? ''),
        spa: spec.manifest.spa,
      };
    const log = (stream: 'stdout' | 'stderr' | 'system', line: string) =>
      this.#logs.write(spec.projectId, spec.deploymentId, stream, line);
    // The first lines on stderr, to tell bwrap's own set-up failure from the app's (decision 082).
    const stderr: string[] = [];
    const dataDir = path.join(projectDir(this.#deps, spec.projectId), 'data');
    const limits = await this.#limits(spec.projectId);
    if (this.#sandbox) this.#ensureDisk(spec.projectId, dataDir, limits.diskMb, log);
    const proc = await spawnApp({
      cwd: spec.dir,
      start: spec.manifest.start!,
      env: await this.#env(spec.projectId),
      onLine: (stream, line) => {
        if (stream === 'stderr' && stderr.length < 20) stderr.push(line);
        log(stream, line);
      },
      handoff: this.#handoff,
      sandbox: this.#sandbox && {
        projectId: spec.projectId,
        dataDir,
        runDir: projectRunDir(this.#deps, spec.projectId),
        limits,
        cgroups: this.#sandbox,
        outboundAllow: allowedCidrs(this.#deps.config.outboundAllow),
      },
    });
    const handoff = proc.ipc ? watchHandoff(proc) : null;
    log('system', `starting deployment ${spec.deploymentId} (pid ${proc.pid}, port ${proc.port})`);
    const health = await waitHealthy(proc, spec.manifest.healthPath, this.#healthTimeoutMs);
    if (!health.ok) {
      // The app's own first error (a SyntaxError, a missing module) says more than the exit code.
      const first = firstErrorLine(stderr);
      if (first) health.reason = `${health.reason} ${first}`;
      log('system', health.reason);
      await proc.stop(1000);
      const flake = this.#sandbox && !retried ? retryableSandboxFailure(stderr) : null;
      if (flake) {
        log('system', `the sandbox could not be set up (${flake}); starting it once more`);
        return this.#start(spec, true);
      }
      throw new Error(health.reason);
    }
    const inst: NodeInstance = {
      kind: 'node',
      deploymentId: spec.deploymentId,
      proc,
      upstream: new Pool(
        proc.socketPath ? 'http://app' : `http://127.0.0.1:${proc.port}`,
        proc.socketPath ? { socketPath: proc.socketPath, connections: 128 } : { connections: 128 },
      ),
      inflight: 0,
      startedAt: Date.now(),
      retiring: false,
      handoff,
    };
    void proc.exited.then((e) => this.#onExit(spec.projectId, inst, e));
    return inst;
  }

  #swap(slot: Slot, inst: Instance): void {
    const old = slot.current;
    slot.current = inst;
    const prev = this.#bySlug.get(slot.spec.slug);
    if (prev && prev !== slot) this.#bySlug.delete(slot.spec.slug);
    this.#bySlug.set(slot.spec.slug, slot);
    if (old) void retireInstance(old, DRAIN_MS);
  }

  #onExit(
    projectId: string,
    inst: NodeInstance,
    e: { code: number | null; signal: string | null; oom?: boolean },
  ): void {
    const slot = this.#byProject.get(projectId);
    if (inst.retiring || this.#closed || !slot || slot.current !== inst || slot.stopped) return;
    void inst.upstream.destroy().catch(() => {});
    // A process that ran a while before crashing starts the back-off afresh.
    if (Date.now() - inst.startedAt > 60_000) slot.crashes = 0;
    const why = `${e.oom ? 'out of memory, ' : ''}${e.signal ?? `code ${e.code}`}`;
    this.#onCrash(slot, inst.deploymentId, why);
  }

  /**
   * One more exit (or failed restart): restarts with back-off, or — the CRASH_LIMIT-th within the window — ends
   * the deployment as `crashed` with the reason, stops restarting and takes the app out of the router.
   */
  #onCrash(slot: Slot, deploymentId: string, why: string): void {
    const now = Date.now();
    slot.exits = [...slot.exits.filter((t) => now - t < CRASH_WINDOW_MS), now];
    if (slot.exits.length >= CRASH_LIMIT) {
      const minutes = Math.round(CRASH_WINDOW_MS / 60_000);
      this.#end(
        slot,
        deploymentId,
        `Crashed: the app exited ${slot.exits.length} times within ${minutes} minutes (last: ${why}); ` +
          `restarts stopped. Deploy again or run 'pier restart --project ${slot.spec.slug}'.`,
      );
      return;
    }
    const delay = Math.min(30_000, 250 * 2 ** slot.crashes);
    slot.crashes++;
    this.#logs.write(
      slot.spec.projectId,
      deploymentId,
      'system',
      `the app exited (${why}); restarting in ${delay} ms`,
    );
    this.#scheduleRestart(slot, delay);
  }

  /** Ends the live version as `crashed` with the reason: no restarts, out of the router, process stopped. */
  #end(slot: Slot, deploymentId: string, message: string): void {
    this.#logs.write(slot.spec.projectId, deploymentId, 'system', message);
    slot.stopped = true;
    if (slot.restartTimer) clearTimeout(slot.restartTimer);
    const old = slot.current;
    slot.current = null;
    if (this.#bySlug.get(slot.spec.slug) === slot) this.#bySlug.delete(slot.spec.slug);
    if (old) void retireInstance(old, 0);
    void this.#deps.db.orm
      .update(deployments)
      .set({ status: 'crashed', errorMessage: message, finishedAt: this.#deps.clock.now() })
      .where(and(eq(deployments.id, deploymentId), eq(deployments.status, 'live')))
      .catch((err) => this.#deps.log.warn({ err, deploymentId }, 'could not record a crash'));
  }

  /** The image of the project's /data mounted (decision 068); on failure the usage check covers it. */
  #ensureDisk(
    projectId: string,
    dataDir: string,
    diskMb: number,
    log: (s: 'system', l: string) => void,
  ): void {
    if (this.#disk?.kind !== 'image') return;
    try {
      mountDataImage(dataDir, diskMb);
      this.#mounted.add(projectId);
    } catch (err) {
      this.#mounted.delete(projectId);
      log(
        'system',
        `could not mount the ${diskMb} MB disk image of /data (${(err as Error).message}); its size is checked instead`,
      );
    }
  }

  #unmount(projectId: string): void {
    if (!this.#mounted.delete(projectId)) return;
    try {
      unmountDataImage(path.join(projectDir(this.#deps, projectId), 'data'));
    } catch (err) {
      this.#deps.log.warn({ err, projectId }, 'could not unmount the data image');
    }
  }

  /** The fallback quota: a running app whose /data is over the plan's disk is stopped with the reason. */
  #checkDisks(): void {
    if (!this.#disk || this.#closed) return;
    for (const slot of this.#byProject.values()) {
      const cur = slot.current;
      if (slot.stopped || cur?.kind !== 'node' || this.#mounted.has(slot.spec.projectId)) continue;
      const dataDir = path.join(projectDir(this.#deps, slot.spec.projectId), 'data');
      void this.#limits(slot.spec.projectId).then((l) => {
        const used = folderBytes(dataDir);
        if (used <= l.diskMb * 1024 * 1024 || slot.current !== cur) return;
        this.#end(
          slot,
          cur.deploymentId,
          `Stopped: /data uses ${Math.ceil(used / 1024 / 1024)} MB, over the plan's disk quota of ${l.diskMb} MB. ` +
            `Free space in /data, then deploy again or run 'pier restart --project ${slot.spec.slug}'.`,
        );
      });
    }
  }

  #scheduleRestart(slot: Slot, delay: number): void {
    if (slot.restartTimer) clearTimeout(slot.restartTimer);
    slot.restartTimer = setTimeout(() => {
      slot.restartTimer = null;
      void this.#serial(slot, async () => {
        if (slot.stopped || this.#closed) return;
        try {
          const inst = await this.#start(slot.spec);
          slot.current = inst;
        } catch (err) {
          this.#onCrash(slot, slot.spec.deploymentId, err instanceof Error ? err.message : String(err));
        }
      });
    }, delay);
    slot.restartTimer.unref();
  }

  /** Stops every app of this node (Pier shutting down; they come back from the database on the next start). */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#diskTimer);
    const all = [...this.#byProject.values()];
    for (const s of all) if (s.restartTimer) clearTimeout(s.restartTimer);
    await Promise.all(
      all.map(async (s) => {
        await s.chain;
        if (s.current) await retireInstance(s.current, 2000);
      }),
    );
    for (const projectId of [...this.#mounted]) this.#unmount(projectId);
    this.#byProject.clear();
    this.#bySlug.clear();
  }
}
