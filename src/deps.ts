import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.ts';
import type { Models } from './core/ai/models.ts';
import type { CredentialService } from './core/auth/credentials.ts';
import type { BlobStore } from './core/blobs/blob-store.ts';
import type { Clock } from './core/clock.ts';
import type { Keyring } from './core/crypto.ts';
import type { Db } from './core/db/client.ts';
import type { JobPayloads, JobQueue } from './core/jobs.ts';
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
  jobs: JobQueue<JobPayloads, Deps>;
  blobs: BlobStore;
  limits: { loginCodeFailures: WindowRule };
  models: Models;
  /** What areas offer each other, from their manifests (memory's vector store to re-embedding, ...). */
  provided: Provided;
};

/**
 * What areas offer each other where importing would make a cycle. Empty here: the area that needs a thing
 * declares its slot (module augmentation) and the one that has it fills the slot in its manifest's
 * `provides`; createDeps gathers them. So Deps names no area (docs/areas.md).
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by module augmentation, which needs an interface.
export interface Provided {}
