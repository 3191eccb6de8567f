import { defineConfig } from 'vitest/config';

// Three projects. `unit`: the files below, which never open a database, run once. `pglite`: every other test
// file, each on fresh PGlite databases. `postgres` (only with TEST_DATABASE_URL): the same files again on
// PostgreSQL. Database tests must run on both, so the list is opt-in: a new test file is not on it and runs
// on both databases until someone adds it here, and a file on it that opens a database fails at once
// (test/no-database.ts) instead of silently skipping PostgreSQL. See docs/testing.md.
const dbFree = [
  'src/areas/hosting/kubernetes/objects.test.ts',
  'src/areas/hosting/kubernetes/regions-check.test.ts',
  'src/config-runtime.test.ts',
  'src/areas/hosting/kubernetes/kube-driver.test.ts',
  'src/cli/browser-login.test.ts',
  'src/areas/workflows/steps/code.test.ts',
  'src/areas/workflows/triggers/cron.test.ts',
  'src/cli/config-store.test.ts',
  'src/cli/output.test.ts',
  'src/cli/program.test.ts',
  'src/areas/cdn/merge-ffmpeg.test.ts',
  'src/areas/webdata/structured.test.ts',
  'src/areas/webdata/content.test.ts',
  'src/areas/webdata/screenshots/change.test.ts',
  'src/core/ai/fallbacks.test.ts',
  'src/core/ai/local-embedder.test.ts',
  'src/core/ai/models.test.ts',
  'src/core/ai/provider-errors.test.ts',
  'src/core/browser/guard.test.ts',
  'src/core/browser/pool.test.ts',
  'src/core/crypto.test.ts',
  'src/core/log-destination.test.ts',
  'src/http/lazy-logger.test.ts',
  'src/core/net/ip-policy.test.ts',
  'src/core/net/safe-fetch.test.ts',
  'src/core/pagination.test.ts',
  'src/http/fast-schemas.test.ts',
  'src/areas/hosting/runtime/artifact.test.ts',
  'src/areas/hosting/runtime/connection-handoff.test.ts',
  'src/areas/hosting/runtime/handoff-config.test.ts',
  'src/areas/hosting/runtime/handoff-shim.test.ts',
  'src/areas/hosting/runtime/local-driver.test.ts',
  'src/areas/hosting/runtime/disk-quota.test.ts',
  'src/sdk/client.test.ts',
  'src/cli/deploy/follow.test.ts',
  'src/areas/hosting/runtime/error-line.test.ts',
  'test/boundaries.test.ts',
  'test/layout.test.ts',
  'test/error-catalogue.test.ts',
  'test/job-types.test.ts',
  'test/docs-self-contained.test.ts',
  'test/install.test.ts',
];

const shared = {
  include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
  testTimeout: 30_000,
  hookTimeout: 60_000,
  // One worker process runs many files and keeps their modules loaded: the app graph (~250 of our modules,
  // ~1,200 of node_modules), the first PGlite's WASM compile and the JIT warm-up are paid once per worker instead
  // of once per file. Safe because state lives on each app's Deps (WeakMaps), not in modules; a test that
  // changes something process-wide (env, timers, globals) must undo it. Measured in docs/testing.md.
  isolate: false,
};

export default defineConfig({
  test: {
    // Vitest's default is one worker per core less one: a single worker on the 2-core CI machine, so every wait
    // (timers, child processes, the PostgreSQL server, pg-boss polling) ran end to end. Two workers overlap
    // them; measured in docs/testing.md. A worker runs many files in turn (isolate: false, below).
    maxWorkers: 2,
    projects: [
      { test: { ...shared, name: 'unit', include: dbFree, setupFiles: ['test/no-database.ts'] } },
      // Only this project runs the browser tests, so only it builds the dashboard (when stale). Its test apps
      // start from a copy of one migrated PGlite (test/pglite-template.ts).
      {
        test: {
          ...shared,
          name: 'pglite',
          exclude: dbFree,
          globalSetup: ['test/pglite-template.ts', 'test/e2e/browser/global-setup.ts'],
        },
      },
      ...(process.env.TEST_DATABASE_URL
        ? [
            {
              test: {
                ...shared,
                name: 'postgres',
                env: { PIER_TEST_DB: 'postgres' },
                // Test databases are copies of one migrated template (test/postgres-template.ts).
                globalSetup: ['test/postgres-template.ts'],
                exclude: [...dbFree, 'test/e2e/browser/**'],
              },
            },
          ]
        : []),
    ],
  },
});
