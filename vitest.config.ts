import { defineConfig } from 'vitest/config';

// The whole suite runs on PGlite; with TEST_DATABASE_URL it runs again on PostgreSQL.
const shared = {
  include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
  testTimeout: 30_000,
  hookTimeout: 60_000,
};

export default defineConfig({
  test: {
    projects: [
      // Only this project runs the browser tests, so only it builds the dashboard (when stale).
      { test: { ...shared, name: 'pglite', globalSetup: ['test/e2e/browser/global-setup.ts'] } },
      ...(process.env.TEST_DATABASE_URL
        ? [
            {
              test: {
                ...shared,
                name: 'postgres',
                env: { PIER_TEST_DB: 'postgres' },
                exclude: ['test/e2e/browser/**'],
              },
            },
          ]
        : []),
    ],
  },
});
