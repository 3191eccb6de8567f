// What a large crawl holds in memory: a crawl of --pages synthetic pages (the bench/webdata.ts site: ~1.3 KB
// pages, each linking to the next five) with the heap read after a forced collection every few seconds, so
// garbage not yet collected does not count (decision 133). Prints pages stored vs the live JS heap of the
// main thread; PGlite's stored pages live in WASM memory, reported apart as `external`.
// Usage: node --expose-gc bench/webdata-memory.ts [--pages 10000] [--every-ms 3000]
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { runCrawl } from '../src/areas/webdata/crawl.ts';
import { createCrawl } from '../src/areas/webdata/crawls.ts';
import { webdataCrawls } from '../src/areas/webdata/tables.ts';
import { loadConfig } from '../src/config.ts';
import { Keyring } from '../src/core/crypto.ts';
import { createDeps } from '../src/create-deps.ts';
import { seedV1Tenant } from '../test/seed.ts';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const PAGES = arg('pages', 10_000);
const EVERY_MS = arg('every-ms', 3000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const mb = (n: number) => (n / 2 ** 20).toFixed(1);
const load = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
console.log(`load before: ${load()} (${os.cpus().length} cores), ${new Date().toISOString()}`);

const page = (i: number) => {
  const links = [1, 2, 3, 4, 5].map((d) => `<a href="/p/${(i + d) % PAGES}">Page ${(i + d) % PAGES}</a>`);
  return `<!doctype html><html><head><title>Page ${i}</title></head><body><nav><a href="/">Home</a> ${links.join(' ')}</nav><main><article><h1>Page ${i}</h1>${'<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>'.repeat(8)}</article></main></body></html>`;
};
const server = http.createServer((req, res) => {
  const m = /^\/(?:p\/(\d+))?$/.exec(req.url ?? '/');
  if (!m) {
    res.statusCode = 404;
    return res.end('not found');
  }
  res.setHeader('content-type', 'text/html; charset=utf-8');
  res.end(page(Number(m[1] ?? 0)));
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const site = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const config = loadConfig({
  DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'pier-bench-webdata-mem-')),
  LOG_LEVEL: 'silent',
  PUBLIC_URL: 'http://pier.bench',
  OUTBOUND_ALLOW: '127.0.0.1/32',
  ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
});
const deps = await createDeps(config, { keyring: Keyring.random(), inMemory: true });
await deps.jobs.start();
const tenant = await seedV1Tenant(deps);
const { id } = await createCrawl(deps, { orgId: tenant.org.id, environment: 'production' }, {
  url: `${site}/`,
  maxDepth: 100_000,
  maxPages: PAGES,
  formats: ['markdown'],
  respectRobotsTxt: true,
} as Parameters<typeof createCrawl>[2]);

const live = () => {
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, external: m.external };
};
const base = live();
console.log(`before the crawl: heap ${mb(base.heap)} MB, external ${mb(base.external)} MB`);
const samples: { pages: number; heap: number; external: number }[] = [];
let sampling = false;
const timer = setInterval(async () => {
  if (sampling) return;
  sampling = true;
  const [c] = await deps.db.orm
    .select({ n: webdataCrawls.pagesCrawled })
    .from(webdataCrawls)
    .where(eq(webdataCrawls.id, id));
  const s = { pages: c?.n ?? 0, ...live() };
  samples.push(s);
  console.log(`  ${String(s.pages).padStart(6)} pages: heap ${mb(s.heap)} MB, external ${mb(s.external)} MB`);
  sampling = false;
}, EVERY_MS);
const t0 = performance.now();
await runCrawl(deps, id);
const sec = (performance.now() - t0) / 1000;
clearInterval(timer);
const [c] = await deps.db.orm.select().from(webdataCrawls).where(eq(webdataCrawls.id, id));
const after = live();
console.log(
  `crawl ${c?.status}: ${c?.pagesCrawled} pages in ${sec.toFixed(1)} s (${((c?.pagesCrawled ?? 0) / sec).toFixed(1)} pages/s)`,
);
console.log(`after the crawl: heap ${mb(after.heap)} MB, external ${mb(after.external)} MB`);
const early = samples.find((s) => s.pages >= PAGES * 0.1);
const late = [...samples].reverse().find((s) => s.pages > (early?.pages ?? 0));
if (early && late) {
  const perPage = (late.heap - early.heap) / (late.pages - early.pages);
  console.log(
    `live heap growth ${early.pages} → ${late.pages} pages: ${mb(late.heap - early.heap)} MB, ${(perPage / 1024).toFixed(2)} KB a page`,
  );
}
console.log(`load after: ${load()}`);
server.close();
process.exit(0);
