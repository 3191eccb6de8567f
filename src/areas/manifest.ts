import type { FastifyPluginAsync } from 'fastify';
import type { CallerResolver } from '../core/auth/resolve.ts';
import type { MigrationSet } from '../core/db/migration-sets.ts';
import type { Catalogue } from '../core/errors.ts';
import type { JobDef } from '../core/jobs.ts';
import type { Deps, Provided } from '../deps.ts';
import type { FnDef } from '../http/fn-kit.ts';
import type { V1Area } from '../http/v1-kit.ts';

// What one area contributes to the process. `src/areas/index.ts` lists every manifest; the function
// registry, the v1 routes, the job list, the schedules, the migrations and the start/stop order are all
// derived from that list, so adding an area is its folder plus one line there. Its jobs' payload types and
// the slots of `provides` are declared by module augmentation beside the manifest (docs/areas.md).

/** A cron schedule an area states at worker start; `cron` null removes one stated by an earlier config. */
export type ScheduleDef = {
  job: string;
  cron: string | ((deps: Deps) => string | null);
  data?: Record<string, unknown>;
  /** Only where the database has this feature (memory's jobs need `vector`). */
  needs?: 'vector';
};

export type AreaStartContext = {
  /** This process consumes jobs (role `worker`). */
  worker: boolean;
  /** This process serves app hostnames (role `router`). */
  router: boolean;
};

/** A running part of an area; stopped in the reverse order of the areas list, after the job workers. */
export type AreaStop = () => Promise<void>;

/** What an area offers other areas: the slots they declared in Provided (src/deps.ts), handed over in deps.provided. */
export type AreaProvisions = Partial<Provided>;

/** A v1 route group registered as a Fastify plugin (streaming routes), mounted at /v1<prefix>. */
export type V1Plugin = {
  prefix: string;
  plugin: FastifyPluginAsync<{ deps: Deps }>;
  /** Mounted only on processes with this role. */
  role?: 'proxy';
};

export type AreaManifest = {
  /** The folder name under src/areas. */
  name: string;
  /** Its error catalogues (`errors.ts`): every code it throws or lists in a route's `errors` is in one. */
  errors?: readonly Catalogue[];
  /** Functions served at POST /api/fn/<name> (dashboard read functions included). */
  fns?: readonly FnDef[];
  /** v1 route groups, each mounted at /v1<prefix>. */
  v1?: readonly V1Area[];
  /** v1 routes that need a plain Fastify plugin (the model proxy streams). */
  v1Plugins?: readonly V1Plugin[];
  /** Other HTTP routes it serves outside both APIs (the dashboard's sign-in, sign-up and session cookie). */
  http?: FastifyPluginAsync<{ deps: Deps; areas: readonly AreaManifest[] }>;
  /** A way to find the caller besides a bearer header (the dashboard's session cookie). */
  callerResolver?: (deps: Deps) => CallerResolver;
  jobs?: readonly JobDef[];
  schedules?: readonly ScheduleDef[];
  /** Its drizzle-kit migration sets (folder migrations/<area>/); names are kept when files move. */
  migrations?: readonly MigrationSet[];
  /**
   * Called once per process before the job workers start (the router's runtime before deploy jobs).
   * Returns its stop, if it keeps anything running.
   */
  start?: (deps: Deps, ctx: AreaStartContext) => Promise<AreaStop | undefined>;
  /** Worker processes only: after the queue started and every schedule was stated (a first run soon). */
  onWorkerStart?: (deps: Deps) => Promise<void>;
  /** Called after the job workers drained, for what the area holds without a start (pools, transports). */
  stop?: (deps: Deps) => Promise<void>;
  /**
   * Function and operation names that are not offered as MCP tools (operator-only ones never are); every
   * other fn and v1 operation of the area is a tool.
   */
  notTools?: readonly string[];
  provides?: AreaProvisions;
};

/** Keeps the literal types of fns and jobs, so the registries derived from the list stay typed. */
export function defineArea<const M extends AreaManifest>(manifest: M): M {
  return manifest;
}

type FnsOf<M> = M extends { fns: readonly (infer F)[] } ? F : never;
type JobsOf<M> = M extends { jobs: readonly (infer J)[] } ? J : never;

/** Every function of a list of areas, as a union (for the SDK's types). */
export type AreaFns<L extends readonly AreaManifest[]> = FnsOf<L[number]>;
/** Every job of a list of areas, as a union. */
export type AreaJobs<L extends readonly AreaManifest[]> = JobsOf<L[number]>;
