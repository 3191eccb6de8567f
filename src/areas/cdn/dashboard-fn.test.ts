import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCdn, putTo, uploadAsset } from '../../../test/cdn-kit.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { expectCredentialGuards, expectError, expectTenantGuards } from '../../../test/security.ts';
import { seedMember, seedProject, seedUser, seedV1Tenant } from '../../../test/seed.ts';

// The dashboard's and CLI's CDN functions: any member of the organization, personal credentials only, the
// environment chosen by the caller, the same service (and checks) as v1, other tenants' assets absent.

let t: TestApp;
let png: Buffer;
beforeAll(async () => {
  t = await testApp();
  png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#3a6' } })
    .png()
    .toBuffer();
});
afterAll(async () => {
  await t?.close();
});

const missing = '00000000-0000-4000-8000-000000000000';

/** An organization with assets stored through v1 (live and test keys) and a plain member. */
async function cdnOrg() {
  const a = await seedV1Tenant(t.deps);
  const member = await seedMember(t.deps, a.org.id, 'member');
  const call = (name: string, body: Record<string, unknown>, token = member.token) =>
    t.call(name, { orgSlug: a.org.slug, environment: 'production', ...body }, token);
  const up = async (key: string, filename: string, mimeType: string, bytes: Buffer, folder?: string) =>
    (await uploadAsset(t, key, { filename, mimeType, bytes, folder })).confirm!.json();
  return { a, member, call, up };
}

describe('CDN dashboard functions', () => {
  it('list assets with signed thumbnails, folders, filters, and one environment at a time', async () => {
    const { a, call, up } = await cdnOrg();
    const img = await up(a.live, 'green.png', 'image/png', png, 'shots/2026');
    const txt = await up(a.live, 'notes.txt', 'text/plain', Buffer.from('hello'), 'docs');
    await up(a.test, 'sandboxed.png', 'image/png', png);

    const all = await call('listCdnAssetsForCli', {});
    expect(all.statusCode, all.body).toBe(200);
    expect(all.json()).toMatchObject({ total: 2, hasMore: false, folders: ['docs', 'shots/2026'] });
    const byId = Object.fromEntries(all.json().items.map((x: { assetId: string }) => [x.assetId, x]));
    expect(byId[txt.assetId].thumbnailUrl).toBeNull();
    const thumb = await getCdn(t, byId[img.assetId].thumbnailUrl);
    expect(thumb.statusCode).toBe(200);
    expect(thumb.headers['content-type']).toBe('image/webp');
    const meta = await sharp(thumb.rawPayload).metadata();
    expect([meta.width, meta.height]).toEqual([320, 320]);

    const images = (await call('listCdnAssetsForCli', { type: 'image' })).json();
    expect(images.items.map((x: { filename: string }) => x.filename)).toEqual(['green.png']);
    const docs = (await call('listCdnAssetsForCli', { folder: 'docs' })).json();
    expect(docs.items.map((x: { filename: string }) => x.filename)).toEqual(['notes.txt']);
    const sandbox = (await call('listCdnAssetsForCli', { environment: 'sandbox' })).json();
    expect(sandbox.items.map((x: { filename: string }) => x.filename)).toEqual(['sandboxed.png']);

    const one = await call('getCdnAssetForCli', { assetId: img.assetId });
    expect(one.statusCode, one.body).toBe(200);
    expect(one.json()).toMatchObject({ filename: 'green.png', width: 40, height: 30, cdnUrl: img.cdnUrl });
    expect((await getCdn(t, one.json().previewUrl)).statusCode).toBe(200);
    // The production asset is not in the sandbox.
    expectError(
      await call('getCdnAssetForCli', { environment: 'sandbox', assetId: img.assetId }),
      404,
      'ASSET_NOT_FOUND',
    );
  });

  it('upload by URL and confirm, with the bytes checked as on v1', async () => {
    const { call } = await cdnOrg();
    const started = await call('createCdnUploadForCli', {
      filename: 'declared.jpg',
      mimeType: 'image/jpeg',
      size: png.length,
      folder: 'uploads',
    });
    expect(started.statusCode, started.body).toBe(200);
    const up = started.json();
    expect(await putTo(t, up.uploadUrl, up.uploadHeaders, png)).toBe(200);
    const done = await call('confirmCdnUploadForCli', { assetId: up.assetId });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toMatchObject({ status: 'ready', mimeType: 'image/png', folder: 'uploads' });
    expectError(
      await call('confirmCdnUploadForCli', { assetId: up.assetId }),
      409,
      'UPLOAD_ALREADY_CONFIRMED',
    );
    const nothing = (
      await call('createCdnUploadForCli', { filename: 'x.png', mimeType: 'image/png', size: 10 })
    ).json();
    expectError(await call('confirmCdnUploadForCli', { assetId: nothing.assetId }), 409, 'UPLOAD_INCOMPLETE');
  });

  it('storage usage by type for both environments or one, and merges of the environment', async () => {
    const { a, call, up } = await cdnOrg();
    await up(a.live, 'a.png', 'image/png', png);
    await up(a.test, 'b.txt', 'text/plain', Buffer.from('12345'));
    const both = await call('getCdnStorageUsageForCli', { environment: undefined });
    expect(both.statusCode, both.body).toBe(200);
    expect(both.json()).toMatchObject({
      objectCount: 2,
      totalBytes: png.length + 5,
      byType: { image: { bytes: png.length, objectCount: 1 } },
      environment: null,
    });
    expect(Object.keys(both.json().byType)).toHaveLength(2);
    const live = (await call('getCdnStorageUsageForCli', {})).json();
    expect(live).toMatchObject({ objectCount: 1, environment: 'production' });
    expect(Object.keys(live.byType)).toEqual(['image']);

    const merges = await call('listCdnMergesForCli', {});
    expect(merges.statusCode, merges.body).toBe(200);
    expect(merges.json()).toMatchObject({ items: [], total: 0 });
    expectError(await call('listCdnMergesForCli', { projectSlug: 'nope' }), 404, 'PROJECT_NOT_FOUND');
  });

  it('refuse bad input with a 400 naming the field', async () => {
    const { call } = await cdnOrg();
    const bad = [
      ['listCdnAssetsForCli', { environment: 'staging' }],
      ['listCdnAssetsForCli', { folder: '../up' }],
      ['listCdnAssetsForCli', { type: 'spreadsheet' }],
      ['listCdnAssetsForCli', { limit: 101 }],
      ['createCdnUploadForCli', { filename: 'a/b.png', mimeType: 'image/png', size: 1 }],
      [
        'createCdnUploadForCli',
        { filename: 'big.bin', mimeType: 'application/x', size: 100 * 1024 * 1024 + 1 },
      ],
      ['createCdnUploadForCli', { filename: 'a.png', mimeType: 'png', size: 1 }],
      ['getCdnAssetForCli', { assetId: '' }],
      ['getCdnStorageUsageForCli', { extra: 1 }],
    ] as const;
    for (const [name, body] of bad) expectError(await call(name, body), 400, 'VALIDATION_ERROR');
    expectError(await call('getCdnAssetForCli', { assetId: 'not-a-uuid' }), 404, 'ASSET_NOT_FOUND');
  });

  it("another organization's assets are absent, strangers get 404, and only personal credentials work", async () => {
    const mine = await cdnOrg();
    const theirs = await cdnOrg();
    const asset = await theirs.up(theirs.a.live, 'secret.png', 'image/png', png);
    for (const name of ['getCdnAssetForCli', 'confirmCdnUploadForCli']) {
      expectError(await mine.call(name, { assetId: asset.assetId }), 404, 'ASSET_NOT_FOUND');
    }
    const listed = (await mine.call('listCdnAssetsForCli', {})).json();
    expect(listed.total).toBe(0);
    expect((await mine.call('getCdnStorageUsageForCli', {})).json().objectCount).toBe(0);
    // Their project is not ours to upload into.
    const project = await seedProject(t.deps, theirs.a.org);
    expectError(
      await mine.call('createCdnUploadForCli', {
        filename: 'a.png',
        mimeType: 'image/png',
        size: 10,
        projectSlug: project.slug,
      }),
      404,
      'PROJECT_NOT_FOUND',
    );
    const stranger = await seedUser(t.deps);
    expectError(
      await theirs.call('getCdnAssetForCli', { assetId: asset.assetId }, stranger.token),
      404,
      'ORG_NOT_FOUND',
    );

    const body = (c: { orgSlug: string }) => ({ orgSlug: c.orgSlug, environment: 'production' });
    const names = {
      listCdnAssetsForCli: body,
      getCdnStorageUsageForCli: (c: { orgSlug: string }) => ({ orgSlug: c.orgSlug }),
      listCdnMergesForCli: body,
      createCdnUploadForCli: (c: { orgSlug: string }) => ({
        ...body(c),
        filename: 'a.png',
        mimeType: 'image/png',
        size: 10,
      }),
    };
    for (const [name, b] of Object.entries(names)) {
      await expectCredentialGuards(t, name, { kind: 'user' }, b({ orgSlug: mine.a.org.slug }));
      await expectTenantGuards(t, { name, body: b, notFound: 'ORG_NOT_FOUND', managersOnly: false });
    }
    await expectCredentialGuards(
      t,
      'getCdnAssetForCli',
      { kind: 'user' },
      {
        ...body({ orgSlug: mine.a.org.slug }),
        assetId: missing,
      },
    );
  });
});
