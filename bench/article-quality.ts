// Article extraction quality: Pier's markdown (toMarkdown, what an extraction returns) beside raw Mozilla
// Readability + Turndown (Readability 0.6 on the same linkedom document, its `content` through a plain
// Turndown with the GFM plugin: what one gets wiring the two libraries by hand), on real news and blog
// pages with hand-made ground truth, in the same run.
//
// Data: a subset (61 of 181 pages: every third by file name) of scrapinghub/article-extraction-benchmark
// (MIT, bench/fixtures/articles/LICENSE), pages as saved by its authors, `articleBody` as ground truth.
// `--dir <path>` runs on another copy of the same layout (html/<id>.html.gz + ground-truth.json), e.g. the
// whole set. Metric: the benchmark's own (evaluate.py): token 4-gram shingles (tokens = \w+), per-page
// TP/FP/FN normalised to sum 1, precision and recall averaged over pages, F1 of the two means.
// Markdown syntax is reduced to its text for both sides alike (link targets, images and markers dropped;
// a leading `# ` title line dropped, as the benchmark's articleBody has no headline).
// Usage: node bench/article-quality.ts [--dir path] [--worst 8]
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';
import { gfm } from 'turndown-plugin-gfm';
import { toMarkdown } from '../src/areas/webdata/content.ts';

const argOf = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const dir = argOf('dir') ?? path.join(import.meta.dirname, 'fixtures/articles');
const WORST = Number(argOf('worst') ?? 8);
const truth = JSON.parse(fs.readFileSync(path.join(dir, 'ground-truth.json'), 'utf8')) as Record<
  string,
  { url: string; articleBody: string }
>;

// The benchmark scores the headline apart from articleBody; a markdown's leading `# ` line is that headline.
const plain = (md: string) =>
  md
    .replace(/^# [^\n]*\n/, '')
    .replace(/!\[[^\]]*\]\([^)]*\)/g, ' ')
    .replace(/\]\((?:[^()]|\([^)]*\))*\)/g, ']')
    .replace(/<br>/g, ' ');
const tokens = (s: string) => s.match(/[\p{L}\p{N}_]+/gu) ?? [];
function shingles(s: string): Map<string, number> {
  const t = tokens(s);
  const out = new Map<string, number>();
  for (let i = 0; i < Math.max(1, t.length - 3); i++) {
    const k = t.slice(i, i + 4).join(' ');
    if (k) out.set(k, (out.get(k) ?? 0) + 1);
  }
  return out;
}
function tpFpFn(truthText: string, pred: string): [number, number, number] {
  const a = shingles(truthText);
  const b = shingles(pred);
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const k of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(k) ?? 0;
    const y = b.get(k) ?? 0;
    tp += Math.min(x, y);
    fp += Math.max(0, y - x);
    fn += Math.max(0, x - y);
  }
  const s = tp + fp + fn;
  return s > 0 ? [tp / s, fp / s, fn / s] : [0, 0, 0];
}
const prec = ([tp, fp, fn]: number[]) => (fp === 0 && fn === 0 ? 1 : tp + fp === 0 ? 0 : tp! / (tp! + fp!));
const rec = ([tp, fp, fn]: number[]) => (fp === 0 && fn === 0 ? 1 : tp + fn! === 0 ? 0 : tp! / (tp! + fn!));
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
function score(rows: number[][]) {
  const p = mean(rows.filter(([tp, fp]) => tp! + fp! > 0).map(prec));
  const r = mean(rows.filter(([tp, , fn]) => tp! + fn! > 0).map(rec));
  return { p, r, f1: (2 * p * r) / (p + r) };
}

const td = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced' });
td.use(gfm);
function readabilityMarkdown(html: string, url: string): string {
  const { document } = parseHTML(html);
  const a = new Readability(document as unknown as Document).parse();
  void url;
  return a?.content ? td.turndown(a.content) : '';
}

const ids = Object.keys(truth).sort();
const pier: number[][] = [];
const base: number[][] = [];
const perPage: { id: string; url: string; pier: number; base: number }[] = [];
let tPier = 0;
let tBase = 0;
for (const id of ids) {
  const html = zlib.gunzipSync(fs.readFileSync(path.join(dir, 'html', `${id}.html.gz`))).toString('utf8');
  const { url, articleBody } = truth[id]!;
  let t0 = performance.now();
  const mdPier = toMarkdown(html, url);
  tPier += performance.now() - t0;
  t0 = performance.now();
  const mdBase = readabilityMarkdown(html, url);
  tBase += performance.now() - t0;
  const a = tpFpFn(articleBody, plain(mdPier));
  const b = tpFpFn(articleBody, plain(mdBase));
  pier.push(a);
  base.push(b);
  const f = (x: number[]) => {
    const p = prec(x);
    const r = rec(x);
    return p + r ? (2 * p * r) / (p + r) : 0;
  };
  perPage.push({ id, url, pier: f(a), base: f(b) });
}
const sp = score(pier);
const sb = score(base);
console.log(`article extraction, ${ids.length} pages from ${dir}`);
console.log(
  `  pier                  F1 ${sp.f1.toFixed(3)}  precision ${sp.p.toFixed(3)}  recall ${sp.r.toFixed(3)}  (${(tPier / ids.length).toFixed(1)} ms/page)`,
);
console.log(
  `  readability+turndown  F1 ${sb.f1.toFixed(3)}  precision ${sb.p.toFixed(3)}  recall ${sb.r.toFixed(3)}  (${(tBase / ids.length).toFixed(1)} ms/page)`,
);
console.log(`  ratio F1 ${(sp.f1 / sb.f1).toFixed(3)}× (target ≥ 1.0×)`);
const worst = [...perPage].sort((x, y) => x.pier - x.base - (y.pier - y.base)).slice(0, WORST);
console.log(`  pages where pier trails readability most:`);
for (const w of worst)
  console.log(
    `    ${w.id.slice(0, 10)} pier ${w.pier.toFixed(2)} readability ${w.base.toFixed(2)}  ${w.url}`,
  );
