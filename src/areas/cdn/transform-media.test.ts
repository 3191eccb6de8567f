import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCdn, uploadAsset } from '../../../test/cdn-kit.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';

// Animation kept through transforms (GIF and WebP in and out, a frame limit), and the crop and canvas options
// past the contract: smart crop, gravity, DPR, padding with a background, sharpen. Real sharp, real server.

const COLOURS = ['#ff0000', '#00ff00', '#0000ff'];

async function animation(format: 'gif' | 'webp', colours = COLOURS, size = { w: 40, h: 30 }) {
  const frames = await Promise.all(
    colours.map((c) =>
      sharp({ create: { width: size.w, height: size.h, channels: 4, background: c } })
        .png()
        .toBuffer(),
    ),
  );
  const joined = sharp(frames, { join: { animated: true } });
  return format === 'gif'
    ? joined.gif({ delay: colours.map(() => 100), loop: 0 }).toBuffer()
    : joined.webp({ delay: colours.map(() => 100), loop: 0, lossless: true }).toBuffer();
}

/** The frames a response carries, each frame's size, and the colour at the middle of each frame. */
async function framesOf(body: Buffer) {
  const meta = await sharp(body, { animated: true }).metadata();
  const pages = meta.pages ?? 1;
  const pageHeight = meta.pageHeight ?? meta.height!;
  const colours: string[] = [];
  for (let i = 0; i < pages; i++) {
    const { data } = await sharp(body, { page: i })
      .extract({ left: Math.floor(meta.width! / 2), top: Math.floor(pageHeight / 2), width: 1, height: 1 })
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    colours.push([...data].map((v) => (v > 127 ? 'f' : '0')).join(''));
  }
  return { format: meta.format, pages, width: meta.width, pageHeight, colours };
}

/** An opaque black square: where it is drawn shows exactly. */
const logoPng = () =>
  sharp({ create: { width: 100, height: 100, channels: 4, background: '#000000ff' } })
    .png()
    .toBuffer();

describe('CDN transforms: animation, smart crop and canvas options', () => {
  let t: TestApp;
  let a: V1Tenant;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await testApp();
    a = await seedV1Tenant(t.deps);
    const up = async (name: string, mimeType: string, bytes: Buffer) => {
      const asset = (await uploadAsset(t, a.live, { filename: name, mimeType, bytes })).confirm!.json();
      expect(asset.status, name).toBe('ready');
      ids[name] = asset.assetId;
    };
    await up('a.gif', 'image/gif', await animation('gif'));
    await up('a.webp', 'image/webp', await animation('webp'));
    await up(
      'long.gif',
      'image/gif',
      await animation(
        'gif',
        Array.from({ length: 501 }, (_, i) => (i % 2 ? '#808080' : '#202020')),
        { w: 2, h: 2 },
      ),
    );
    // A flat grey field with one busy, high-contrast patch near its right edge.
    const noise = await sharp({
      create: {
        width: 120,
        height: 120,
        channels: 3,
        background: '#000',
        noise: { type: 'gaussian', mean: 128, sigma: 120 },
      },
    })
      .png()
      .toBuffer();
    const busy = await sharp({ create: { width: 800, height: 200, channels: 3, background: '#777777' } })
      .composite([{ input: noise, left: 640, top: 40 }])
      .png()
      .toBuffer();
    await up('busy.png', 'image/png', busy);
    await up(
      'plain.png',
      'image/png',
      await sharp({ create: { width: 800, height: 600, channels: 3, background: '#fff' } })
        .png()
        .toBuffer(),
    );
    await up('logo.png', 'image/png', await logoPng());
  });
  afterAll(() => t.close());

  const render = async (name: string, options: Record<string, unknown>, accept = '*/*') => {
    const r = await t.v1('POST', '/cdn/transform', a.live, { assetId: ids[name], options });
    expect(r.statusCode, r.body).toBe(200);
    return getCdn(t, r.json().url, { accept });
  };

  it('records frames and a tiny placeholder on the asset at confirm', async () => {
    const gif = (await t.v1('GET', `/cdn/assets/${ids['a.gif']}`, a.live)).json();
    expect(gif).toMatchObject({ frames: 3, width: 40, height: 30 });
    const still = (await t.v1('GET', `/cdn/assets/${ids['busy.png']}`, a.live)).json();
    expect(still.frames).toBeNull();
    expect(still.placeholder).toMatch(/^data:image\/webp;base64,/);
    const lqip = Buffer.from(still.placeholder.split(',')[1], 'base64');
    expect(lqip.length).toBeLessThan(400);
    const meta = await sharp(lqip).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 16, 4]);
  });

  it('keeps a GIF animated through a resize, every frame resized', async () => {
    const r = await render('a.gif', { width: 20 });
    expect(r.headers['content-type']).toBe('image/gif');
    expect(await framesOf(r.rawPayload)).toMatchObject({
      format: 'gif',
      pages: 3,
      width: 20,
      pageHeight: 15,
      colours: ['f00', '0f0', '00f'],
    });
  });

  it('turns an animated GIF into animated WebP and an animated WebP into a GIF, cropped', async () => {
    const webp = await render('a.gif', { width: 16, height: 16, fit: 'cover', format: 'webp' });
    expect(await framesOf(webp.rawPayload)).toMatchObject({
      format: 'webp',
      pages: 3,
      width: 16,
      pageHeight: 16,
    });
    const gif = await render('a.webp', { width: 10, height: 10, format: 'gif' });
    expect(await framesOf(gif.rawPayload)).toMatchObject({
      format: 'gif',
      pages: 3,
      width: 10,
      colours: ['f00', '0f0', '00f'],
    });
  });

  it('answers animated WebP for format=auto where a browser takes WebP or AVIF, else a GIF', async () => {
    const modern = await render('a.gif', { width: 20, format: 'auto' }, 'image/avif,image/webp,*/*');
    expect(modern.headers['content-type']).toBe('image/webp');
    expect((await framesOf(modern.rawPayload)).pages).toBe(3);
    const old = await render('a.gif', { width: 20, format: 'auto' }, '*/*');
    expect(old.headers['content-type']).toBe('image/gif');
    expect((await framesOf(old.rawPayload)).pages).toBe(3);
  });

  it('gives the first frame when the asked format cannot move (JPEG, PNG, AVIF)', async () => {
    for (const format of ['jpeg', 'png', 'avif']) {
      const r = await render('a.gif', { width: 20, format });
      const f = await framesOf(r.rawPayload);
      expect([f.pages, f.width, f.pageHeight, f.colours[0]], format).toEqual([1, 20, 15, 'f00']);
    }
  });

  it('refuses an animation over 500 frames with 413 IMAGE_TOO_MANY_FRAMES', async () => {
    const r = await render('long.gif', { width: 1 });
    expect([r.statusCode, r.json().error.code]).toEqual([413, 'IMAGE_TOO_MANY_FRAMES']);
    // As a still it is one frame: allowed.
    expect((await render('long.gif', { width: 1, format: 'png' })).statusCode).toBe(200);
  });

  it('smart crop (gravity attention) keeps the busy region; a centred crop is flat grey', async () => {
    const spread = async (body: Buffer) => {
      const { channels } = await sharp(body).stats();
      return Math.max(...channels.map((c) => c.stdev));
    };
    const smart = await render('busy.png', { width: 200, height: 200, fit: 'cover', gravity: 'attention' });
    const centred = await render('busy.png', { width: 200, height: 200, fit: 'cover' });
    expect(await spread(centred.rawPayload)).toBeLessThan(1);
    expect(await spread(smart.rawPayload)).toBeGreaterThan(40);
    // The patch (x 640–760 of 800) lies wholly inside the chosen 200 px window.
    const { data } = await sharp(smart.rawPayload).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const column = (x: number) => data[(100 * 200 + x) * 3]!;
    expect(column(0)).toBe(0x77);
    expect(column(199)).toBe(0x77);
    const east = await render('busy.png', { width: 200, height: 200, fit: 'cover', gravity: 'east' });
    expect(await spread(east.rawPayload)).toBeGreaterThan(40);
  });

  it('multiplies the size by dpr and pads with the background colour', async () => {
    const r = await render('busy.png', { width: 100, dpr: 2, format: 'png' });
    expect((await sharp(r.rawPayload).metadata()).width).toBe(200);
    const padded = await render('busy.png', {
      width: 40,
      height: 10,
      pad: 5,
      background: 'ff0000',
      format: 'jpeg',
    });
    const meta = await sharp(padded.rawPayload).metadata();
    expect([meta.width, meta.height]).toEqual([50, 20]);
    const { data } = await sharp(padded.rawPayload).raw().toBuffer({ resolveWithObject: true });
    expect(data[0]! > 200 && data[1]! < 50 && data[2]! < 50).toBe(true);
    const sharpened = await render('busy.png', { width: 100, sharpen: 2, format: 'png' });
    expect(
      sharpened.rawPayload.equals((await render('busy.png', { width: 100, format: 'png' })).rawPayload),
    ).toBe(false);
  });

  it('draws a text watermark and an image watermark in the chosen corner, faded', async () => {
    // A plain white picture: anything not white is the mark.
    const white = async (body: Buffer) => {
      const { data, info } = await sharp(body).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      const marked = (x0: number, y0: number, w: number, h: number) => {
        let n = 0;
        for (let y = y0; y < y0 + h; y++) {
          for (let x = x0; x < x0 + w; x++) if (data[(y * info.width + x) * 3]! < 200) n++;
        }
        return n;
      };
      return { info, marked };
    };
    const text = await render('plain.png', { width: 400, format: 'png', watermarkText: '© Pier <3' });
    expect(text.statusCode).toBe(200);
    const t1 = await white(text.rawPayload);
    expect(t1.marked(200, 150, 200, 150)).toBeGreaterThan(50); // south-east quarter
    expect(t1.marked(0, 0, 200, 150)).toBe(0);
    const logo = await render('plain.png', {
      width: 400,
      format: 'png',
      watermarkAsset: ids['logo.png'],
      watermarkPosition: 'northwest',
      watermarkScale: 0.3,
      watermarkOpacity: 0.5,
    });
    const l1 = await white(logo.rawPayload);
    expect(l1.marked(0, 0, 200, 150)).toBeGreaterThan(1000);
    expect(l1.marked(200, 150, 200, 150)).toBe(0);
    // Faded: a black logo at half opacity over white is mid grey, not black.
    const { data } = await sharp(logo.rawPayload).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const px = data[(40 * 400 + 60) * 3]!;
    expect(px > 100 && px < 160).toBe(true);
    // Another tenant's image, or a non-image, cannot be a watermark.
    const other = await seedV1Tenant(t.deps);
    const foreign = (
      await uploadAsset(t, other.live, { filename: 'x.png', mimeType: 'image/png', bytes: await logoPng() })
    ).confirm!.json();
    const r = await t.v1('POST', '/cdn/transform', a.live, {
      assetId: ids['plain.png'],
      options: { watermarkAsset: foreign.assetId },
    });
    expect([r.statusCode, r.json().error.code]).toEqual([400, 'WATERMARK_INVALID']);
  });

  it('validates the new options', async () => {
    for (const options of [
      { gravity: 'middle' },
      { dpr: 5 },
      { dpr: 0.5 },
      { background: 'red' },
      { pad: 1001 },
      { sharpen: 11 },
      { format: 'bmp' },
      { watermarkText: '' },
      { watermarkAsset: 'not-a-uuid' },
      { watermarkOpacity: 2 },
    ]) {
      const r = await t.v1('POST', '/cdn/transform', a.live, { assetId: ids['a.gif'], options });
      expect([r.statusCode, r.json().error.code], JSON.stringify(options)).toEqual([400, 'VALIDATION_ERROR']);
    }
  });
});
