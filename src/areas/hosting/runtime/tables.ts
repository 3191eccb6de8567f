import {
  bigserial,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';
import { orgs, projects, secrets } from '../../orgs/index.ts';

// Hosting: each project's database, its deployments and its apps' log lines.

export type AppDbKind = 'pglite' | 'postgres';

/** The project's own database: a PGlite data folder served on loopback, or a PostgreSQL database + role. */
export const appDatabases = pgTable('app_databases', {
  projectId: uuid('project_id')
    .primaryKey()
    .references(() => projects.id, { onDelete: 'cascade' }),
  kind: text('kind').$type<AppDbKind>().notNull(),
  dbName: text('db_name').notNull(),
  roleName: text('role_name').notNull(),
  passwordEnc: text('password_enc').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/** `crashed`: it was live and then exited too often (supervisor.ts, docs/decisions/069); restarts stopped. */
export type DeploymentStatus =
  | 'uploading'
  | 'building'
  | 'starting'
  | 'live'
  | 'crashed'
  | 'failed'
  | 'superseded';
export type AppKind = 'static' | 'node';
/** What detect.ts recognised (docs/hosting.md "Detection"); shown by `pier deployments`. */
export type DetectedKind =
  | 'vite'
  | 'sveltekit'
  | 'astro'
  | 'next'
  | 'nuxt'
  | 'remix'
  | 'node-start'
  | 'static'
  | 'prebuilt';
export type AppManifest = {
  type: AppKind;
  start?: string;
  healthPath: string;
  spa: boolean;
  kind?: DetectedKind;
  /** A static site's served folder, relative to the release ('' or absent: the release itself). */
  root?: string;
  /** Where a static build's output is looked for, in order; resolved into `root` after the build. */
  outputDirs?: string[];
  /** The commands the build and the app run (install and build only when built from source). */
  commands?: { install?: string; build?: string; start?: string; prune?: string };
  /** Installed with another package manager than npm: `pnpm@<version>` (pnpm.ts). */
  packageManager?: string;
  /** The start command needs a dev dependency (e.g. `vite preview`): the build does not prune them. */
  keepDevDeps?: boolean;
  /** It packed node_modules but not its build output: the build installs afresh from the lockfile. */
  replaceModules?: boolean;
  /** A Node app with no dependencies (only devDependencies): the build removes node_modules instead of pruning. */
  noRuntimeDeps?: boolean;
  /** Filled after the build: how long it took and which settings it saw (names only). */
  buildMs?: number;
  buildEnvKeys?: string[];
  /** The build reused node_modules from the build cache (same lockfile). */
  buildCacheHit?: boolean;
};
/** How a deployment came to be: an upload, a rebuild of an earlier one's artifact, or a rollback to its build. */
export type DeploymentOrigin = 'deploy' | 'redeploy' | 'rollback';
export type LogPhase = 'build' | 'runtime';

export const deployments = pgTable(
  'deployments',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    orgId: uuid('org_id')
      .notNull()
      .references(() => orgs.id, { onDelete: 'cascade' }),
    status: text('status').$type<DeploymentStatus>().notNull(),
    artifactKey: text('artifact_key').notNull(),
    manifest: jsonb('manifest').$type<AppManifest>(),
    errorMessage: text('error_message'),
    /** Who asked: 'user:<id>' or 'platform:<keyId>'. */
    createdBy: text('created_by').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    uploadExpiresAt: timestamp('upload_expires_at', { withTimezone: true }).notNull(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    liveAt: timestamp('live_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    origin: text('origin').$type<DeploymentOrigin>().notNull().default('deploy'),
    /** The deployment a redeploy or rollback was made from. */
    sourceId: uuid('source_id'),
    /** The deployment whose release folder (its built files) this one runs; null: its own. */
    releaseId: uuid('release_id'),
  },
  (t) => [index('deployments_project_idx').on(t.projectId, t.createdAt)],
);

export const appLogs = pgTable(
  'app_logs',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    deploymentId: uuid('deployment_id'),
    ts: timestamp('ts', { withTimezone: true }).notNull(),
    stream: text('stream').$type<'stdout' | 'stderr' | 'system'>().notNull(),
    line: text('line').notNull(),
    seq: integer('seq').notNull().default(0),
    /** build: the deployment's build output; runtime: the app's own output once started (null: older lines). */
    phase: text('phase').$type<LogPhase>(),
  },
  (t) => [index('app_logs_project_idx').on(t.projectId, t.id)],
);

/**
 * Secrets marked for the build (decision 108): besides the VITE_/PUBLIC_/NEXT_PUBLIC_/NUXT_PUBLIC_ names, these
 * reach the build's environment. The mark goes with its secret (removing the secret removes it); setting the
 * secret's value again keeps it.
 */
export const buildSecrets = pgTable(
  'build_secrets',
  {
    projectId: uuid('project_id').notNull(),
    key: text('key').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.key] }),
    foreignKey({ columns: [t.projectId, t.key], foreignColumns: [secrets.projectId, secrets.key] }).onDelete(
      'cascade',
    ),
  ],
);
