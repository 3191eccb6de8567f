import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../harness.ts';
import { seedV1Tenant } from '../../seed.ts';
import { launchBrowser, startPier } from './browser-kit.ts';

// A hosted app's page on another origin uploads through the presigned flow on the disk driver, as a
// browser enforces it: the app's backend asks for the upload URL (API key), the page PUTs the file to
// Pier (a preflighted cross-origin request), the backend confirms, the page reads the delivered asset.

let t: TestApp;
let browser: Browser;
let site: http.Server;
let siteUrl: string;

beforeAll(async () => {
  ({ t } = await startPier());
  browser = await launchBrowser();
  site = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>shop</title><p>shop</p>');
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  await browser?.close();
  await new Promise((r) => site?.close(r));
  await t?.close();
});

describe('cross-origin upload in a browser', { timeout: 60_000 }, () => {
  it('a page on another origin PUTs to the upload URL and reads the asset back; a second PUT is refused', async () => {
    const a = await seedV1Tenant(t.deps);
    const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#3a7' } })
      .png()
      .toBuffer();
    const up = (
      await t.v1('POST', '/cdn/upload', a.live, {
        filename: 'p.png',
        mimeType: 'image/png',
        size: png.length,
      })
    ).json();
    const page = await browser.newPage();
    await page.goto(siteUrl);
    const put = (bytes: number[]) =>
      page.evaluate(
        async ({ url, headers, bytes }) => {
          try {
            const res = await fetch(url, { method: 'PUT', headers, body: new Uint8Array(bytes) });
            return { status: res.status, body: await res.text() };
          } catch (err) {
            return { status: 0, body: String(err) };
          }
        },
        { url: up.uploadUrl, headers: up.uploadHeaders, bytes },
      );
    const first = await put([...png]);
    expect(first.status).toBe(200);
    const second = await put([...png]);
    expect(second.status).toBe(409);
    expect(JSON.parse(second.body).error.code).toBe('UPLOAD_URL_USED');

    const asset = (await t.v1('POST', `/cdn/upload/${up.assetId}/confirm`, a.live, {})).json();
    expect(asset).toMatchObject({ status: 'ready', width: 40, height: 30 });
    const read = await page.evaluate(async (url) => {
      const res = await fetch(url);
      return { length: (await res.arrayBuffer()).byteLength, etag: res.headers.get('etag') };
    }, asset.cdnUrl);
    expect(read.length).toBe(png.length);
    expect(read.etag).toBeTruthy();
  });

  it('a page on another origin sends a resumable (tus) upload in pieces, stops, resumes from HEAD', async () => {
    const a = await seedV1Tenant(t.deps);
    const jpeg = await sharp({
      create: {
        width: 300,
        height: 200,
        channels: 3,
        background: '#000',
        noise: { type: 'gaussian', mean: 128, sigma: 50 },
      },
    })
      .jpeg({ quality: 95 })
      .toBuffer();
    const up = (
      await t.v1('POST', '/cdn/upload', a.live, {
        filename: 'r.jpg',
        mimeType: 'image/jpeg',
        size: jpeg.length,
        resumable: true,
      })
    ).json();
    const page = await browser.newPage();
    await page.goto(siteUrl);
    // docs/cdn.md's fetch-only example, with a cap on PATCHes to stand for a connection lost midway.
    const send = (maxPatches: number) =>
      page.evaluate(
        async ({ url, bytes, maxPatches }) => {
          const file = new Blob([new Uint8Array(bytes)]);
          const tus = { 'Tus-Resumable': '1.0.0' };
          const head = await fetch(url, { method: 'HEAD', headers: tus });
          let offset = Number(head.headers.get('Upload-Offset'));
          const start = offset;
          for (let n = 0; offset < file.size && n < maxPatches; n++) {
            const res = await fetch(url, {
              method: 'PATCH',
              headers: {
                ...tus,
                'Upload-Offset': String(offset),
                'Content-Type': 'application/offset+octet-stream',
              },
              body: file.slice(offset, offset + 16 * 1024),
            });
            if (res.status !== 204) return { start, offset, status: res.status };
            offset = Number(res.headers.get('Upload-Offset'));
          }
          return { start, offset, status: 204 };
        },
        { url: up.uploadUrl, bytes: [...jpeg], maxPatches },
      );
    const first = await send(2);
    expect(first).toEqual({ start: 0, offset: 32 * 1024, status: 204 });
    const rest = await send(1000);
    expect(rest).toEqual({ start: 32 * 1024, offset: jpeg.length, status: 204 });
    const asset = (await t.v1('POST', `/cdn/upload/${up.assetId}/confirm`, a.live, {})).json();
    expect(asset).toMatchObject({ status: 'ready', size: jpeg.length, width: 300, height: 200 });
    const length = await page.evaluate(
      async (url) => (await (await fetch(url)).arrayBuffer()).byteLength,
      asset.cdnUrl,
    );
    expect(length).toBe(jpeg.length);
  });
});
