import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, openTestDb } from '../../../test/harness.ts';
import type { Db } from './client.ts';
import { queryPrepared, queryPreparedBatch } from './pglite-prepared.ts';

// Recall sends its HNSW settings and its legs' statement in one protocol call (decision 090): the
// settings must reach the next statement of the call and must not outlive it.

describe.skipIf(onPostgres)('prepared statements on PGlite', () => {
  let db: Db;
  beforeAll(async () => {
    ({ db } = await openTestDb());
  });
  afterAll(async () => {
    await db.close();
  });

  const setting = `SELECT current_setting('enable_sort') AS v`;

  it('applies a local setting of the first statement to the next one of the same call only', async () => {
    const pg = db.pglite!;
    const rows = await queryPreparedBatch<{ v: string }>(
      pg,
      [
        { text: `SELECT set_config('enable_sort', $1, true)`, params: ['off'] },
        { text: setting, params: [] },
      ],
      false,
    );
    expect(rows).toEqual([{ v: 'off' }]);
    expect(await queryPrepared(pg, setting, [], false)).toEqual([{ v: 'on' }]);
    expect((await db.query<{ v: string }>(setting)).rows).toEqual([{ v: 'on' }]);
  });

  it('rolls the whole call back when a statement fails, and keeps working after', async () => {
    const pg = db.pglite!;
    await db.exec('CREATE TABLE prepared_probe (n int PRIMARY KEY)');
    await expect(
      queryPreparedBatch(
        pg,
        [
          { text: 'INSERT INTO prepared_probe VALUES ($1)', params: [1] },
          { text: 'SELECT 1 / $1::int AS x', params: [0] },
        ],
        false,
      ),
    ).rejects.toThrow(/division by zero/);
    expect((await db.query('SELECT * FROM prepared_probe')).rows).toEqual([]);
    expect(await queryPrepared(pg, 'SELECT 1 / $1::int AS x', [1], false)).toEqual([{ x: 1 }]);
  });
});
