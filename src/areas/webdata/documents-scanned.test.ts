import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { scannedPdf } from '../../../test/scanned-pdf.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import { tinyPdf } from '../../../test/webdata-site.ts';

// Scanned PDFs (a page that is only an image): read by Tesseract when the server has it (Debian's
// tesseract-ocr + tesseract-ocr-eng, installed by .ci/run), flagged with a warning when it does not; a PDF
// with a text layer is neither.

describe('web data documents: scanned PDFs', { timeout: 120_000 }, () => {
  let t: TestApp;
  let a: V1Tenant;
  let server: http.Server;
  let base: string;

  beforeAll(async () => {
    const scan = await scannedPdf(['Invoice number 4711', 'Total due 93 euros']);
    const text = tinyPdf();
    server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/pdf' }).end(req.url === '/scan.pdf' ? scan : text);
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    t = await testApp({ env: { OUTBOUND_ALLOW: '127.0.0.1/32', V1_RATE_LIMIT_BURST: '100000' } });
    a = await seedV1Tenant(t.deps);
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    server?.close();
  });

  const parse = async (path: string) => {
    const res = await t.v1('POST', '/webdata/documents', a.live, { url: `${base}${path}` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  it('reads a scanned page with Tesseract and says so', async () => {
    const d = await parse('/scan.pdf');
    expect(d).toMatchObject({
      type: 'pdf',
      pageCount: 1,
      scanned: true,
      ocr: { engine: 'tesseract', language: 'eng', pages: 1 },
      warnings: [],
    });
    expect(d.markdown).toContain('Invoice number 4711');
    expect(d.markdown).toContain('Total due 93 euros');
  });

  it('without OCR, flags the scanned page instead of answering empty text silently', async () => {
    const config = t.deps.config.webdata as { tesseract: string };
    const was = config.tesseract;
    config.tesseract = '';
    try {
      const d = await parse('/scan.pdf');
      expect(d).toMatchObject({ scanned: true, ocr: null, markdown: '' });
      expect(d.warnings).toEqual([
        'Scanned: page(s) 1 have no text layer, and OCR is not available on this server (install tesseract-ocr and a language pack).',
      ]);
    } finally {
      config.tesseract = was;
    }
  });

  it('a PDF with a text layer is not scanned', async () => {
    const d = await parse('/text.pdf');
    expect(d).toMatchObject({ scanned: false, ocr: null, warnings: [] });
    expect(d.markdown).toContain('Hello from page one');
  });
});
