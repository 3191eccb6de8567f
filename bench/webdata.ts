// Web data figures, each beside a baseline measured in the same run:
//  1. crawl pages/s: Pier's crawl (runCrawl: robots.txt, breadth-first, same-site links, markdown stored per
//     page in the database) vs Crawlee's CheerioCrawler (robots.txt respected, same-hostname links, nothing
//     stored) on the same local site, same concurrency, same page cap;
//  2. screenshot p50: Pier's capture in its browser pool (a context per shot behind the SSRF guard, every
//     request resolved by Node) vs raw playwright-core (a context per shot, Chromium's own network), both on a
//     warm browser, same page, same viewport, PNG;
//  3. extraction quality: content F1 (bag of words) of the markdown Pier extracts vs hand-written truth, on
//     the saved pages in bench/fixtures/webdata/ (articles, docs, products, tables), per page.
//  4. crawl pages/s on real documentation (bench/webdata-corpus.ts: the Python docs, 5–750 KB Sphinx pages):
//     Pier's crawl (markdown of every page) vs CheerioCrawler whose handler makes markdown the way one wires
//     it by hand (Readability 0.6 on a linkedom parse of the body, Turndown + GFM), same cap, same start
//     page, same concurrency; both also follow same-host links (Crawlee with its own cheerio parse).
// Usage: npm run bench:webdata [-- --pages 300 --shots 20 --rounds 2 --real 150 --real-rounds 1]
// (`--shots 0` or `--real 0` skips that part, `--crawlee 0` the Crawlee runs: e.g. `--pages 10000 --crawlee 0`
// for a 10,000-page crawl's memory.)
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readability } from '@mozilla/readability';
import { eq, sql } from 'drizzle-orm';
import { parseHTML } from 'linkedom';
import { chromium } from 'playwright-core';
import TurndownService from 'turndown';
import { gfm } from 'turndown-plugin-gfm';
import { toMarkdown } from '../src/areas/webdata/content.ts';
import { runCrawl } from '../src/areas/webdata/crawl.ts';
import { createCrawl } from '../src/areas/webdata/crawls.ts';
import { capture } from '../src/areas/webdata/screenshots/capture.ts';
import { createBody } from '../src/areas/webdata/screenshots/schema.ts';
import { webdataCrawlPages, webdataCrawls } from '../src/areas/webdata/tables.ts';
import { loadConfig } from '../src/config.ts';
import { BrowserPool } from '../src/core/browser/pool.ts';
import { Keyring } from '../src/core/crypto.ts';
import { createDeps } from '../src/create-deps.ts';
import { seedV1Tenant } from '../test/seed.ts';
import { pythonDocsRoot, serveDir } from './webdata-corpus.ts';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const PAGES = arg('pages', 300);
const SHOTS = arg('shots', 20);
const ROUNDS = arg('rounds', 2);
const REAL = arg('real', 150);
const REAL_ROUNDS = arg('real-rounds', 1);
const CONCURRENCY = 4;
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const loadavg = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
console.log(`load before: ${loadavg()} (${os.cpus().length} cores)`);

// The site: PAGES pages, each linking to the next five and to a disallowed /private page; robots.txt with
// a Disallow and no Crawl-delay (a delay would make both crawlers wait the same and measure nothing).
const page = (i: number) => {
  const links = [1, 2, 3, 4, 5].map((d) => `<a href="/p/${(i + d) % PAGES}">Page ${(i + d) % PAGES}</a>`);
  return `<!doctype html><html><head><title>Page ${i}</title></head><body><nav><a href="/">Home</a> ${links.join(' ')} <a href="/private/${i}">Private</a></nav><main><article><h1>Page ${i}</h1>${'<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>'.repeat(8)}<ul><li>One</li><li>Two</li></ul></article></main></body></html>`;
};
const hits = { pages: 0, private: 0 };
const server = http.createServer((req, res) => {
  const url = req.url ?? '/';
  if (url === '/robots.txt') {
    res.setHeader('content-type', 'text/plain');
    return res.end('User-agent: *\nDisallow: /private\n');
  }
  if (url.startsWith('/private')) hits.private++;
  const m = /^\/(?:p\/(\d+))?$/.exec(url);
  if (!m) {
    res.statusCode = 404;
    return res.end('not found');
  }
  hits.pages++;
  res.setHeader('content-type', 'text/html; charset=utf-8');
  res.end(page(Number(m[1] ?? 0)));
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const site = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-bench-webdata-'));
const config = loadConfig({
  DATA_DIR: dataDir,
  LOG_LEVEL: 'silent',
  PUBLIC_URL: 'http://pier.bench',
  OUTBOUND_ALLOW: '127.0.0.1/32',
  WEBDATA_CRAWL_CONCURRENCY: String(CONCURRENCY),
  ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
});
const deps = await createDeps(config, { keyring: Keyring.random(), inMemory: true });
await deps.jobs.start();
const tenant = await seedV1Tenant(deps);
const scope = { orgId: tenant.org.id, environment: 'production' as const };

// 1. Crawl.
async function pierCrawl(
  start = `${site}/`,
  cap = PAGES,
): Promise<{ pages: number; sec: number; chars: number; heapMb: number }> {
  // The crawl's own memory: the main thread's JS heap, sampled (PGlite's pages live in WASM memory, apart).
  let heapMax = 0;
  const sampler = setInterval(() => {
    heapMax = Math.max(heapMax, process.memoryUsage().heapUsed);
  }, 200);
  const { id } = await createCrawl(deps, scope, {
    url: start,
    maxDepth: 100_000,
    maxPages: cap,
    formats: ['markdown'],
    respectRobotsTxt: true,
  } as Parameters<typeof createCrawl>[2]);
  const t0 = performance.now();
  await runCrawl(deps, id);
  const sec = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  const [c] = await deps.db.orm.select().from(webdataCrawls).where(eq(webdataCrawls.id, id));
  if (c?.status !== 'completed') throw new Error(`pier crawl ended ${c?.status}: ${c?.error}`);
  const [m] = await deps.db.orm
    .select({ chars: sql<number>`coalesce(sum(length(${webdataCrawlPages.markdown})), 0)` })
    .from(webdataCrawlPages)
    .where(eq(webdataCrawlPages.crawlId, id));
  return { pages: c.pagesCrawled, sec, chars: Number(m?.chars ?? 0), heapMb: heapMax / 2 ** 20 };
}

type CrawleeMod = typeof import('@crawlee/cheerio');
// The markdown a Crawlee user gets by wiring Readability and Turndown by hand (Crawlee has no converter).
const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced' });
turndown.use(gfm);
let crawleeMarkdownChars = 0;
function handMarkdown(html: string): void {
  const article = new Readability(parseHTML(html).document as unknown as Document).parse();
  crawleeMarkdownChars += article?.content ? turndown.turndown(article.content).length : 0;
}

async function crawleeCrawl(
  mod: CrawleeMod,
  start = `${site}/`,
  cap = PAGES,
  markdown = false,
): Promise<{ pages: number; sec: number }> {
  const { CheerioCrawler, Configuration, log } = mod;
  log.setLevel(log.LEVELS.OFF);
  let pages = 0;
  const crawler = new CheerioCrawler(
    {
      maxConcurrency: CONCURRENCY,
      minConcurrency: CONCURRENCY,
      maxRequestsPerCrawl: cap,
      respectRobotsTxtFile: true,
      maxRequestRetries: 0,
      requestHandlerTimeoutSecs: 120,
      async requestHandler({ $, body, enqueueLinks }) {
        pages++;
        $('title').text();
        if (markdown) handMarkdown(String(body));
        await enqueueLinks({ strategy: 'same-hostname' });
      },
    },
    new Configuration({ persistStorage: false, purgeOnStart: true }),
  );
  const t0 = performance.now();
  await crawler.run([start]);
  return { pages, sec: (performance.now() - t0) / 1000 };
}

let crawlee: CrawleeMod | null = null;
try {
  if (arg('crawlee', 1) === 0) throw new Error('skipped (--crawlee 0)');
  crawlee = await import('@crawlee/cheerio');
} catch (err) {
  console.log(`crawlee: not installed (${(err as Error).message.split('\n')[0]})`);
}
const crawlRows: string[] = [];
let pierBest = 0;
let crawleeBest = 0;
for (let r = 0; r < ROUNDS; r++) {
  hits.private = 0;
  const p = await pierCrawl();
  const pPrivate = hits.private;
  pierBest = Math.max(pierBest, p.pages / p.sec);
  crawlRows.push(
    `  round ${r + 1} pier:    ${p.pages} pages in ${p.sec.toFixed(2)} s = ${(p.pages / p.sec).toFixed(1)} pages/s (disallowed hits ${pPrivate}; JS heap peak ${p.heapMb.toFixed(0)} MB)`,
  );
  if (crawlee) {
    hits.private = 0;
    const c = await crawleeCrawl(crawlee);
    crawleeBest = Math.max(crawleeBest, c.pages / c.sec);
    crawlRows.push(
      `  round ${r + 1} crawlee: ${c.pages} pages in ${c.sec.toFixed(2)} s = ${(c.pages / c.sec).toFixed(1)} pages/s (disallowed hits ${hits.private})`,
    );
  }
}
console.log(`\n1. crawl, ${PAGES}-page local site, concurrency ${CONCURRENCY}, robots.txt respected`);
for (const row of crawlRows) console.log(row);
console.log(
  `  best: pier ${pierBest.toFixed(1)} pages/s${crawlee ? `, crawlee ${crawleeBest.toFixed(1)} pages/s, ratio ${(pierBest / crawleeBest).toFixed(2)}× (target ≥ 1.0×)` : ''}`,
);

// 4. Crawl of real documentation pages (run before the browser starts, so it does not share the cores).
if (REAL > 0) {
  const docs = await serveDir(pythonDocsRoot());
  const start = `${docs.site}/library/index.html`;
  const rows: string[] = [];
  let pierRate = 0;
  let crawleeRate = 0;
  let crawleeBare = 0;
  for (let r = 0; r < REAL_ROUNDS; r++) {
    docs.stats.pages = 0;
    docs.stats.bytes = 0;
    const p = await pierCrawl(start, REAL);
    const kb = docs.stats.bytes / 1024;
    pierRate = Math.max(pierRate, p.pages / p.sec);
    rows.push(
      `  round ${r + 1} pier:    ${p.pages} pages (${(kb / p.pages).toFixed(0)} KB avg) in ${p.sec.toFixed(1)} s = ${(p.pages / p.sec).toFixed(2)} pages/s (${(p.chars / 1e6).toFixed(1)} M chars of markdown)`,
    );
    if (crawlee) {
      docs.stats.pages = 0;
      docs.stats.bytes = 0;
      crawleeMarkdownChars = 0;
      const c = await crawleeCrawl(crawlee, start, REAL, true);
      crawleeRate = Math.max(crawleeRate, c.pages / c.sec);
      rows.push(
        `  round ${r + 1} crawlee: ${c.pages} pages (${(docs.stats.bytes / 1024 / c.pages).toFixed(0)} KB avg) in ${c.sec.toFixed(1)} s = ${(c.pages / c.sec).toFixed(2)} pages/s (${(crawleeMarkdownChars / 1e6).toFixed(1)} M chars of markdown)`,
      );
      // For reference, not the target: the handler parsing only (title and links, no markdown).
      const bare = await crawleeCrawl(crawlee, start, REAL, false);
      crawleeBare = Math.max(crawleeBare, bare.pages / bare.sec);
      rows.push(
        `  round ${r + 1} crawlee, parse only (no markdown): ${bare.pages} pages in ${bare.sec.toFixed(1)} s = ${(bare.pages / bare.sec).toFixed(2)} pages/s`,
      );
    }
  }
  docs.close();
  console.log(
    `\n4. crawl, Python 3.11 docs served locally from /library/index.html, cap ${REAL}, concurrency ${CONCURRENCY}, markdown on both sides`,
  );
  for (const row of rows) console.log(row);
  console.log(
    `  best: pier ${pierRate.toFixed(2)} pages/s${crawlee ? `, crawlee ${crawleeRate.toFixed(2)} pages/s, ratio ${(pierRate / crawleeRate).toFixed(2)}× (target ≥ 1.0×); crawlee parse only ${crawleeBare.toFixed(2)} pages/s (${(pierRate / crawleeBare).toFixed(2)}×)` : ''}`,
  );
}

// 2. Screenshots on a warm browser.
if (SHOTS > 0) {
  const shotUrl = `${site}/p/1`;
  const pool = new BrowserPool({
    executablePath: CHROMIUM,
    maxPages: 2,
    recycleAfter: 100_000,
    pageTimeoutMs: 60_000,
    outboundAllow: config.outboundAllow,
  });
  const options = (() => {
    const { url: _u, ...o } = createBody.parse({ url: shotUrl, viewportWidth: 1280, viewportHeight: 800 });
    return o;
  })();
  const raw = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
  const rawShot = async () => {
    const ctx = await raw.newContext({ viewport: { width: 1280, height: 800 } });
    const pg = await ctx.newPage();
    await pg.goto(shotUrl, { waitUntil: 'load' });
    const b = await pg.screenshot({ type: 'png' });
    await ctx.close();
    return b;
  };
  const pierShot = () => capture(pool, shotUrl, options);
  for (let i = 0; i < 3; i++) {
    await rawShot();
    await pierShot();
  }
  const tRaw: number[] = [];
  const tPier: number[] = [];
  for (let i = 0; i < SHOTS; i++) {
    let t0 = performance.now();
    await rawShot();
    tRaw.push(performance.now() - t0);
    t0 = performance.now();
    await pierShot();
    tPier.push(performance.now() - t0);
  }
  await raw.close();
  await pool.close();
  console.log(`\n2. screenshot 1280×800 PNG, warm browser, ${SHOTS} shots each (interleaved)`);
  console.log(
    `  p50 pier ${p50(tPier).toFixed(1)} ms, raw playwright-core ${p50(tRaw).toFixed(1)} ms, ratio ${(p50(tPier) / p50(tRaw)).toFixed(2)}× (target ≤ 1.2×)`,
  );
}

// 3. Extraction quality.
const dir = path.join(import.meta.dirname, 'fixtures/webdata');
const words = (md: string) =>
  md
    .toLowerCase()
    .replace(/\]\([^)]*\)/g, ']')
    .match(/[\p{L}\p{N}]+/gu) ?? [];
function f1(pred: string[], truth: string[]) {
  const bag = new Map<string, number>();
  for (const w of truth) bag.set(w, (bag.get(w) ?? 0) + 1);
  let overlap = 0;
  for (const w of pred) {
    const n = bag.get(w) ?? 0;
    if (n > 0) {
      overlap++;
      bag.set(w, n - 1);
    }
  }
  const p = pred.length ? overlap / pred.length : 0;
  const r = truth.length ? overlap / truth.length : 0;
  return { p, r, f: p + r ? (2 * p * r) / (p + r) : 0 };
}
const names = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.html'))
  .sort();
console.log(`\n3. extraction content F1 (markdown vs hand-written truth), ${names.length} pages`);
const scores: number[] = [];
const byKind = new Map<string, number[]>();
for (const f of names) {
  const html = fs.readFileSync(path.join(dir, f), 'utf8');
  const truth = fs.readFileSync(path.join(dir, f.replace(/\.html$/, '.truth.md')), 'utf8');
  const md = toMarkdown(html, `https://example.com/${f}`);
  const s = f1(words(md), words(truth));
  scores.push(s.f);
  const kind = f.split('-')[0]!;
  byKind.set(kind, [...(byKind.get(kind) ?? []), s.f]);
  console.log(`  ${f.padEnd(26)} P ${s.p.toFixed(3)}  R ${s.r.toFixed(3)}  F1 ${s.f.toFixed(3)}`);
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
for (const [k, xs] of byKind)
  console.log(`  mean ${k.padEnd(8)} ${mean(xs).toFixed(3)} (${xs.length} pages)`);
console.log(`  mean F1 ${mean(scores).toFixed(3)}`);

console.log(`\nload after: ${loadavg()}`);

server.close();
process.exit(0);
