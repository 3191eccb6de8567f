import { vi } from 'vitest';

// Setup of the `unit` project (vitest.config.ts): its files run on neither database, so one that opens a
// database belongs in the other projects. Failing here keeps it from passing on PGlite only.
vi.mock('../src/core/db/client.ts', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../src/core/db/client.ts')>()),
  openDb: () => {
    throw new Error(
      'This test file is in the `unit` project (no database) but opened one: take it off the dbFree list in vitest.config.ts so it runs on PGlite and PostgreSQL.',
    );
  },
}));
