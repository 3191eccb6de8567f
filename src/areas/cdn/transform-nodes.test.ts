import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCdn, uploadAsset } from '../../../test/cdn-kit.ts';
import { onPostgres, type TestApp, testApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import { type Db, openDb } from '../../core/db/client.ts';
import { settleTransforms, transformStats } from './transform.ts';

// Two Pier nodes (two apps, each with its own connection pool) on one PostgreSQL database and one blob
// store: an uncached transform asked of both at once is rendered once (the advisory lock in transform.ts).
// PGlite is one process, where the in-process coalescing of transform.test.ts is the whole story.

describe.runIf(onPostgres)('CDN transforms across nodes', () => {
  let one: TestApp;
  let two: TestApp;
  let twoDb: Db;
  let a: V1Tenant;
  let assetId: string;

  beforeAll(async () => {
    one = await testApp();
    const url = (one.deps.db as Db & { url?: string }).url!;
    twoDb = await openDb({ databaseUrl: url, poolSize: 5 });
    (twoDb as Db & { url?: string }).url = url;
    two = await testApp({ db: twoDb, dataDir: one.dataDir, keyring: one.deps.keyring, clock: one.clock });
    a = await seedV1Tenant(one.deps);
    const bytes = await sharp({
      create: { width: 1200, height: 900, channels: 3, background: { r: 200, g: 30, b: 90 } },
    })
      .jpeg()
      .toBuffer();
    assetId = (
      await uploadAsset(one, a.live, { filename: 'n.jpg', mimeType: 'image/jpeg', bytes })
    ).confirm!.json().assetId;
  });
  afterAll(async () => {
    await two?.close();
    await twoDb?.close();
    await one?.close();
  });

  it('renders once for 10 concurrent identical requests on each of two nodes', async () => {
    for (const options of [
      { width: 321, blur: 3 },
      { width: 222, height: 111, format: 'webp' },
    ]) {
      const r = await one.v1('POST', '/cdn/transform', a.live, { assetId, options });
      expect(r.statusCode, r.body).toBe(200);
      const url = r.json().url as string;
      const before = transformStats.renders;
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => [getCdn(one, url), getCdn(two, url)]).flat(),
      );
      expect(answers.map((x) => x.statusCode)).toEqual(Array(20).fill(200));
      expect(transformStats.renders - before).toBe(1);
      expect(new Set(answers.map((x) => x.rawPayload.toString('base64'))).size).toBe(1);
    }
  });

  it('answers 404 on every node once an asset is deleted on one of them', async () => {
    const bytes = await sharp({
      create: { width: 400, height: 300, channels: 3, background: { r: 9, g: 9, b: 9 } },
    })
      .jpeg()
      .toBuffer();
    const id = (
      await uploadAsset(one, a.live, { filename: 'd.jpg', mimeType: 'image/jpeg', bytes })
    ).confirm!.json().assetId;
    const urls: string[] = [];
    for (const width of [90, 91]) {
      const r = await one.v1('POST', '/cdn/transform', a.live, { assetId: id, options: { width } });
      urls.push(r.json().url as string);
    }
    // Node two has served (and so remembers) the asset; node one deletes it.
    expect((await getCdn(two, urls[0]!)).statusCode).toBe(200);
    await settleTransforms(two.deps.db);
    expect((await one.v1('DELETE', `/cdn/assets/${id}`, a.live)).statusCode).toBe(200);
    for (const node of [one, two]) {
      for (const url of urls) {
        const r = await getCdn(node, url);
        expect([r.statusCode, r.json().error.code]).toEqual([404, 'ASSET_NOT_FOUND']);
      }
    }
  });
});
