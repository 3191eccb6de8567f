import type { MigrationSet } from '../core/db/migration-sets.ts';
import type { JobPayloads, JobPayloadsOf } from '../core/jobs.ts';
import type { Provided } from '../deps.ts';
import { cdnArea } from './cdn/index.ts';
import { hostingArea } from './hosting/index.ts';
import { identityArea } from './identity/index.ts';
import { infrastructure } from './infrastructure.ts';
import { integrationsArea } from './integrations/index.ts';
import { mailArea } from './mail/index.ts';
import type { AreaFns, AreaJobs, AreaManifest } from './manifest.ts';
import { mcpArea } from './mcp/index.ts';
import { memoryArea } from './memory/index.ts';
import { modelsArea } from './models/index.ts';
import { oauthArea } from './oauth/index.ts';
import { orgsArea } from './orgs/index.ts';
import { webdataArea } from './webdata/index.ts';
import { workflowsArea } from './workflows/index.ts';

// THE list of areas. The function registry, the v1 routes, the job list, the schedules, the
// migrations (in this order: an area's tables may reference those of the areas before it) and the start and
// stop order (stops run in reverse) are all derived from it. Adding an area: its folder, and one line here.
export const areas = [
  infrastructure,
  orgsArea,
  identityArea,
  modelsArea,
  hostingArea,
  mailArea,
  memoryArea,
  cdnArea,
  integrationsArea,
  workflowsArea,
  webdataArea,
  oauthArea,
  mcpArea,
] as const;

export type Areas = typeof areas;

/** The same list, for code that reads the optional parts (schedules, start/stop, provisions). */
export function manifests(): readonly AreaManifest[] {
  return areas;
}

/** Every function served at POST /api/fn/<name>. */
export const functions = manifests().flatMap((a) => a.fns ?? []) as unknown as readonly AreaFns<Areas>[];

/** Every background job, registered with the queue by createDeps. */
export const jobDefs = manifests().flatMap((a) => a.jobs ?? []) as unknown as readonly AreaJobs<Areas>[];

// Each manifest's jobs are declared in JobPayloads beside it (module augmentation), with the payload their
// schema takes: this fails to compile when a listed job is not declared, or a declared one is listed nowhere.
type JobRegistry = JobPayloadsOf<readonly AreaJobs<Areas>[]>;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type MustHold<T extends true> = T;
type _JobsDeclared = MustHold<Same<JobRegistry, JobPayloads>>;

/** Every error catalogue: the shared one, the infrastructure's and each area's (test/error-catalogue.test.ts). */
export const errorCatalogues = manifests().flatMap((a) => a.errors ?? []);

export const migrationSets: readonly MigrationSet[] = manifests().flatMap((a) => a.migrations ?? []);

/** What areas declare they offer each other, gathered once (deps.provided). */
export function provisions(): Provided {
  const vectorStores = manifests().flatMap((a) => a.provides?.vectorStores ?? []);
  const provisionProject = manifests().find((a) => a.provides?.provisionProject)?.provides?.provisionProject;
  const sendSystemMail = manifests().find((a) => a.provides?.sendSystemMail)?.provides?.sendSystemMail;
  const onEmailVerified = manifests().find((a) => a.provides?.onEmailVerified)?.provides?.onEmailVerified;
  return { vectorStores, provisionProject, sendSystemMail, onEmailVerified };
}
