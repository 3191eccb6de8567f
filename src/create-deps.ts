import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { jobDefs, migrationSets, provisions } from './areas/index.ts';
import type { Config } from './config.ts';
import { createModels } from './core/ai/models.ts';
import { CredentialService } from './core/auth/credentials.ts';
import { createBlobStore } from './core/blobs/create-blob-store.ts';
import { systemClock } from './core/clock.ts';
import { Keyring, loadMasterKey } from './core/crypto.ts';
import { type Db, openDb } from './core/db/client.ts';
import { migrate } from './core/db/migrate.ts';
import { type JobPayloads, JobQueue, type JobQueueOptions } from './core/jobs.ts';
import { WindowLimiter } from './core/rate-limit/limiter.ts';
import type { Deps } from './deps.ts';

// Building Deps needs the list of areas (their migrations, jobs and provisions), so it lives apart from the
// Deps type, which every service imports and which names no area.

export type DepsOverrides = Partial<Pick<Deps, 'clock' | 'keyring' | 'log' | 'limits' | 'blobs'>> & {
  db?: Db;
  /** PGlite in memory instead of under DATA_DIR (tests). */
  inMemory?: boolean;
  /** Queue polling and cron intervals (tests make them fast). */
  jobOptions?: JobQueueOptions;
  /** Told when each start-up step begins (`npm start` prints them). */
  progress?: (step: 'database' | 'migrations') => void;
};

/** The process logger; `destination` lets tests read what would be logged. */
export function createLogger(config: Config, destination?: pino.DestinationStream): FastifyBaseLogger {
  return pino(
    {
      level: config.logLevel,
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          '*.token',
          '*.secret',
          '*.apiKey',
          '*.value',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  ) as unknown as FastifyBaseLogger;
}

/** Opens the database, applies migrations and wires the shared services; no listening, no workers. */
export async function createDeps(config: Config, o: DepsOverrides = {}): Promise<Deps> {
  const log = o.log ?? createLogger(config);
  o.progress?.('database');
  const db =
    o.db ??
    (await openDb({
      databaseUrl: config.databaseUrl,
      dataDir: o.inMemory ? undefined : `${config.dataDir}/db`,
    }));
  o.progress?.('migrations');
  const result = await migrate(db, migrationSets);
  for (const s of result.skipped) log.warn({ area: s.area }, `area disabled: ${s.reason}`);
  const keyring = o.keyring ?? new Keyring(loadMasterKey(config.dataDir, config.secretKey));
  const clock = o.clock ?? systemClock;
  const jobs = new JobQueue<JobPayloads, Deps>(db, o.jobOptions);
  jobs.register(jobDefs);
  const deps: Deps = {
    config,
    db,
    keyring,
    clock,
    log,
    credentials: new CredentialService(db, keyring, clock),
    limiter: new WindowLimiter(db, clock),
    jobs,
    blobs: o.blobs ?? createBlobStore(config, keyring, clock),
    limits: o.limits ?? { loginCodeFailures: { limit: 10, windowSec: 300 } },
    models: createModels(config.models),
    provided: provisions(),
  };
  jobs.bind(deps);
  return deps;
}
