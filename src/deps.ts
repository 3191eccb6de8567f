import type { FastifyBaseLogger } from 'fastify';
import type { JobRegistry, Provided } from './areas/index.ts';
import type { Config } from './config.ts';
import type { Models } from './core/ai/models.ts';
import type { CredentialService } from './core/auth/credentials.ts';
import type { BlobStore } from './core/blobs/blob-store.ts';
import type { Clock } from './core/clock.ts';
import type { Keyring } from './core/crypto.ts';
import type { Db } from './core/db/client.ts';
import type { JobQueue } from './core/jobs.ts';
import type { WindowLimiter, WindowRule } from './core/rate-limit/limiter.ts';

/** Everything a service needs, created once per process (or per test) and passed in (src/create-deps.ts). */
export type Deps = {
  config: Config;
  db: Db;
  keyring: Keyring;
  clock: Clock;
  log: FastifyBaseLogger;
  credentials: CredentialService;
  limiter: WindowLimiter;
  jobs: JobQueue<JobRegistry, Deps>;
  blobs: BlobStore;
  limits: { loginCodeFailures: WindowRule };
  models: Models;
  /** What areas offer each other, from their manifests (memory's vector store to re-embedding, ...). */
  provided: Provided;
};
