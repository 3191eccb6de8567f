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
});
