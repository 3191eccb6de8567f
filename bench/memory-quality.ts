// bench/memory-quality: does recall bring back what was said or written? Four corpora made independently
// (bench/memory-quality-corpora.ts: generated chats, generated notes, hand-written chats, a hand-written
// handbook), each with questions and the memories that answer them, each split once into a tuning half
// and a report half. Per corpus and half: evidence recall@5/@10 of the default recall, each mode, plain
// BM25 computed here over the same texts, and the techniques measured for the default (fusion weights,
// pseudo-relevance feedback, neighbouring turns, the time boost); then recall latency, alone and with four
// concurrent callers, in the service and over HTTP. One run, offline.
//   node bench/memory-quality.ts                       (PGlite in memory)
//   BENCH_DATABASE_URL=postgres://… node bench/memory-quality.ts   (PostgreSQL with pgvector)
//   BENCH_QUALITY=0: latency only; BENCH_LATENCY=http: only the HTTP latency rows; BENCH_LATENCY=0: none.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createAgent } from '../src/areas/memory/agents.ts';
import { memoryContext, type Scope } from '../src/areas/memory/context.ts';
import { KEYWORD_TUNING } from '../src/areas/memory/keyword-rank.ts';
import { storeMemories } from '../src/areas/memory/memories.ts';
import { RECALL_TUNING, recall } from '../src/areas/memory/recall.ts';
import { loadConfig } from '../src/config.ts';
import { Keyring } from '../src/core/crypto.ts';
import { createDeps } from '../src/create-deps.ts';
import { buildApp } from '../src/http/app.ts';
import { seedApiKey, seedOrg } from '../test/seed.ts';
import { benchDatabase } from './bench-db.ts';
import {
  bm25Index,
  type Corpus,
  type CorpusQuestion,
  corpora,
  type Doc,
  expandQuery,
  type Half,
  withNeighbours,
} from './memory-quality-corpora.ts';

const N_CONV = Number(process.env.BENCH_CONVERSATIONS ?? 10);
const N_NOTES = Number(process.env.BENCH_NOTES ?? 600);
const LAT_QUERIES = Number(process.env.BENCH_LATENCY_QUERIES ?? 200);
if (process.env.BENCH_BUDGET) KEYWORD_TUNING.candidateBudget = Number(process.env.BENCH_BUDGET);
const bdb = await benchDatabase();
const dbUrl = bdb.url;

// Fusions measured against the default (set through RECALL_TUNING, restored after each call).
type Tuning = { fusion: 'rrf' | 'relative'; rrfK: number; wv: number; scale?: 'minmax' | 'max' };
async function withTuning<T>(t: Tuning, fn: () => Promise<T>): Promise<T> {
  const saved = { ...RECALL_TUNING };
  Object.assign(RECALL_TUNING, {
    fusion: t.fusion,
    rrfK: t.rrfK,
    localLegWeights: [t.wv, 1],
    localKeywordScale: t.scale ?? 'minmax',
  });
  try {
    return await fn();
  } finally {
    Object.assign(RECALL_TUNING, saved);
  }
}
const FUSIONS: [string, Tuning][] = [
  ['fusion relative wv=0 (keyword order)', { fusion: 'relative', rrfK: 10, wv: 0 }],
  ['fusion relative wv=0.25', { fusion: 'relative', rrfK: 10, wv: 0.25 }],
  ['fusion relative wv=0.5 (the default before decision 140)', { fusion: 'relative', rrfK: 10, wv: 0.5 }],
  ['fusion relative wv=1', { fusion: 'relative', rrfK: 10, wv: 1 }],
  ['fusion rrf k=10 wv=0.5', { fusion: 'rrf', rrfK: 10, wv: 0.5 }],
  // The keyword leg divided by its best score: each of its matches keeps a share (decision 140).
  [
    'fusion keyword÷max wv=0 (keyword order, vector fills: the default, decision 140)',
    { fusion: 'relative', rrfK: 10, wv: 0, scale: 'max' },
  ],
  ['fusion keyword÷max wv=0.25', { fusion: 'relative', rrfK: 10, wv: 0.25, scale: 'max' }],
  ['fusion keyword÷max wv=0.5', { fusion: 'relative', rrfK: 10, wv: 0.5, scale: 'max' }],
];

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-bench-quality-'));
const config = loadConfig({
  DATA_DIR: dataDir,
  LOG_LEVEL: 'silent',
  // the bench's four clients measure recall, not the per-key rate limit
  V1_RATE_LIMIT_PER_SEC: '100000',
  V1_RATE_LIMIT_BURST: '1000000',
  ...(dbUrl ? { DATABASE_URL: dbUrl } : {}),
});
const deps = await createDeps(config, { inMemory: !dbUrl, keyring: Keyring.random() });
const ctx = memoryContext(deps);
const { org } = await seedOrg(deps);
const scope: Scope = { orgId: org.id, environment: 'production' };
const now = () => performance.now();
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

// 1. Store: one agent per set (a conversation, the notes, the handbook). A chat turn is stored with the
// time it was said (`referenceTime`), so its `eventAt` is that day or the time its words name.
type Stored = { agentId: string; docs: Doc[]; ids: string[]; texts: string[]; lastDate?: string };
let stored = 0;
async function store(name: string, docs: Doc[]): Promise<Stored> {
  const agent = await createAgent(ctx, scope, { name });
  const ids: string[] = [];
  for (let i = 0; i < docs.length; i += 100) {
    const items = docs.slice(i, i + 100).map((d) => ({
      content: d.text,
      type: 'episodic' as const,
      confidence: 1,
      metadata: d.session === undefined ? {} : { session: d.session, date: d.date },
      ...(d.date ? { referenceTime: `${d.date}T12:00:00.000Z` } : {}),
    }));
    const r = await storeMemories(ctx, scope, agent.id, items as never);
    ids.push(...r.memories.map((m) => m.id));
    stored += r.created;
  }
  const dates = docs.map((d) => d.date).filter((d): d is string => !!d);
  return { agentId: agent.id, docs, ids, texts: docs.map((d) => d.text), lastDate: dates.sort().at(-1) };
}
const t0 = now();
const all = corpora(N_CONV, N_NOTES);
const storedSets = new Map<Corpus, Stored[]>();
for (const c of all) {
  const sets: Stored[] = [];
  for (const s of c.sets) sets.push(await store(s.name, s.docs));
  storedSets.set(c, sets);
}
await deps.db.exec('ANALYZE memories'); // fresh statistics on both (PGlite has no autovacuum)
console.log(
  `bench/memory-quality on ${bdb.label}: ${all.map((c) => `${c.name} (${c.sets.reduce((a, s) => a + s.docs.length, 0)} memories, ${c.questions.length} questions)`).join('; ')}; ${stored} memories created in ${((now() - t0) / 1000).toFixed(1)} s\n`,
);

// 2. Quality: evidence recall@k = share of a question's evidence in the top k, averaged per half.
type Score = { at5: number; at10: number; n: number };
const MODES = [
  ['default', undefined],
  ['hybrid', 'hybrid'],
  ['vector', 'vector'],
  ['keyword', 'keyword'],
] as const;
async function recallIdx(set: Stored, q: string, extra: Record<string, unknown> = {}, limit = 10) {
  const pos = new Map(set.ids.map((id, i) => [id, i]));
  // The question is asked the day after the set's last turn (its "now"), so "in June" means that June.
  const referenceTime = set.lastDate ? `${set.lastDate}T23:00:00.000Z` : undefined;
  const r = await recall(
    ctx,
    scope,
    { query: q, agentId: set.agentId, limit, referenceTime, ...extra } as never,
    {
      countAccess: false,
    },
  );
  return r.memories.map((m) => pos.get(m.id)!);
}
type System = (set: Stored, q: CorpusQuestion) => Promise<number[]>;
function systemsFor(c: Corpus): [string, System][] {
  const bm = new Map<Stored, ReturnType<typeof bm25Index>>();
  const bmOf = (s: Stored) => {
    if (!bm.has(s)) bm.set(s, bm25Index(s.texts));
    return bm.get(s)!;
  };
  const out: [string, System][] = [['BM25', async (s, q) => bmOf(s).search(q.question, 10)]];
  for (const [name, mode] of MODES)
    out.push([name, (s, q) => recallIdx(s, q.question, mode ? { mode } : {})]);
  out.push(['default, no time boost', (s, q) => recallIdx(s, q.question, { timeBoost: false })]);
  out.push([
    'default + PRF (4 words of the top 3)',
    async (s, q) => {
      const first = await recallIdx(s, q.question);
      const b = bmOf(s);
      const expanded = expandQuery(
        q.question,
        first.slice(0, 3).map((i) => s.texts[i]!),
        b.idf,
        s.texts.length,
      );
      return recallIdx(s, expanded);
    },
  ]);
  if (c.sets.some((s) => s.docs.some((d) => d.session !== undefined)))
    for (const w of [0.25, 0.5])
      out.push([
        `default + neighbouring turns ×${w}`,
        async (s, q) => withNeighbours(await recallIdx(s, q.question, {}, 30), s.docs, w, 10),
      ]);
  for (const [name, t] of FUSIONS) out.push([name, (s, q) => withTuning(t, () => recallIdx(s, q.question))]);
  return out;
}
const fmt = (s: Score | undefined) =>
  s?.n ? `${(s.at5 / s.n).toFixed(3)} / ${(s.at10 / s.n).toFixed(3)}` : '—';
const r10 = (s: Score | undefined) => (s?.n ? s.at10 / s.n : 0);
const QUALITY = process.env.BENCH_QUALITY !== '0';
const summary: string[] = [];
for (const c of QUALITY ? all : []) {
  const tq = now();
  const sets = storedSets.get(c)!;
  const systems = systemsFor(c);
  const table = new Map<string, Record<Half, Score>>();
  for (const [name] of systems)
    table.set(name, { tuning: { at5: 0, at10: 0, n: 0 }, report: { at5: 0, at10: 0, n: 0 } });
  for (const q of c.questions) {
    for (const [name, sys] of systems) {
      const got = await sys(sets[q.set]!, q);
      const s = table.get(name)![q.half];
      s.at5 += q.evidence.filter((w) => got.slice(0, 5).includes(w)).length / q.evidence.length;
      s.at10 += q.evidence.filter((w) => got.slice(0, 10).includes(w)).length / q.evidence.length;
      s.n++;
    }
  }
  const n = (h: Half) => c.questions.filter((q) => q.half === h).length;
  console.log(
    `### ${c.name} — tuning ${n('tuning')} / report ${n('report')} questions (${((now() - tq) / 1000).toFixed(1)} s)`,
  );
  console.log('| system | tuning @5 / @10 | report @5 / @10 | ÷ BM25 @10 tuning | ÷ BM25 @10 report |');
  console.log('|---|---|---|---|---|');
  const b = table.get('BM25')!;
  for (const [name] of systems) {
    const row = table.get(name)!;
    const ratio = (h: Half) => `${(r10(row[h]) / r10(b[h])).toFixed(2)}×`;
    console.log(
      `| ${name} | ${fmt(row.tuning)} | ${fmt(row.report)} | ${ratio('tuning')} | ${ratio('report')} |`,
    );
  }
  const d = table.get('default')!.report;
  const k = table.get('keyword')!.report;
  summary.push(
    `${c.name}: report half default ${r10(d).toFixed(3)} vs BM25 ${r10(b.report).toFixed(3)} (${(r10(d) / r10(b.report)).toFixed(2)}×), keyword leg ${r10(k).toFixed(3)}${r10(d) < r10(k) ? ' — BELOW the keyword leg' : ''}`,
  );
  console.log('');
}
for (const line of summary) console.log(line);

// Default recall over the whole organization (every corpus: the HNSW path) against the same with the
// vector leg scanned exactly, on the generated chats (BENCH_ORG=1; decision 092).
if (QUALITY && process.env.BENCH_ORG) {
  const gen = all[0]!;
  const sets = storedSets.get(gen)!;
  const at10 = async () => {
    let sum = 0;
    for (const q of gen.questions) {
      const r = await recall(ctx, scope, { query: q.question, limit: 10 } as never, { countAccess: false });
      const got = r.memories.map((m) => m.id);
      const want = q.evidence.map((e) => sets[q.set]!.ids[e]!);
      sum += want.filter((id) => got.includes(id)).length / want.length;
    }
    return sum / gen.questions.length;
  };
  const walk = await at10();
  const exactMax = RECALL_TUNING.exactScanMax;
  RECALL_TUNING.exactScanMax = Number.MAX_SAFE_INTEGER;
  const exact = await at10().finally(() => {
    RECALL_TUNING.exactScanMax = exactMax;
  });
  console.log(
    `whole organization (${stored} memories), default, evidence recall@10: HNSW ${walk.toFixed(3)}, exact vector leg ${exact.toFixed(3)}`,
  );
}
const total = stored;
const conv0 = storedSets.get(all[0]!)!;
const sets = conv0.map((s) => ({ agentId: s.agentId, ids: s.ids }));
const conv = { questions: all[0]!.questions };
// 3. Latency: default recall over the whole organization (≈6,000 memories, the HNSW path) and within one
// conversation's agent (the exact path), one caller, then four callers at once.
const questions = conv.questions.map((q) => q.question);
async function run(callers: number, agentId?: string): Promise<number[]> {
  const times: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      for (;;) {
        const i = next++;
        if (i >= LAT_QUERIES) return;
        const s = now();
        await recall(ctx, scope, { query: questions[i % questions.length]!, limit: 10, agentId } as never);
        times.push(now() - s);
      }
    }),
  );
  await ctx.access.idle();
  return times;
}
// BENCH_LATENCY=http: only the route, as a user calls it (the service-level rows are skipped).
const HTTP_ONLY = process.env.BENCH_LATENCY === 'http';
const LATENCY = process.env.BENCH_LATENCY !== '0';
if (!HTTP_ONLY && LATENCY) await run(1); // warm-up (caches, plans)
for (const [label, agentId] of HTTP_ONLY || !LATENCY
  ? []
  : ([
      [`whole organization (${total} memories)`, undefined],
      [`one conversation (${sets[0]!.ids.length} memories)`, sets[0]!.agentId],
    ] as const)) {
  const one = await run(1, agentId);
  const four = await run(4, agentId);
  console.log(
    `recall latency, ${label}: 1 caller p50 ${pct(one, 50).toFixed(1)} / p95 ${pct(one, 95).toFixed(1)} ms; 4 callers p50 ${pct(four, 50).toFixed(1)} / p95 ${pct(four, 95).toFixed(1)} ms`,
  );
}

// 4. The same through the HTTP route, as a user calls it: a live API key, POST /v1/memory/memories/recall
// on 127.0.0.1, four clients each with its own keep-alive connection (auth, validation and serialisation
// included). The first column is one client alone, the baseline of the same run.
const app = await buildApp(deps, { logger: false });
await app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
const { key } = await seedApiKey(deps, org.id, 'live');
async function runHttp(callers: number, agentId?: string): Promise<number[]> {
  const times: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      for (;;) {
        const i = next++;
        if (i >= LAT_QUERIES) return;
        const s = now();
        const res = await fetch(`${base}/v1/memory/memories/recall`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ query: questions[i % questions.length]!, limit: 10, agentId }),
        });
        const body = (await res.json()) as { memories?: unknown[] };
        if (res.status !== 200 || !body.memories)
          throw new Error(`recall ${res.status}: ${JSON.stringify(body)}`);
        times.push(now() - s);
      }
    }),
  );
  await ctx.access.idle();
  return times;
}
if (LATENCY) await runHttp(4); // warm-up (caches, plans, connections)
for (const [label, agentId] of (LATENCY
  ? [
      [`whole organization (${total} memories)`, undefined],
      [`one conversation (${sets[0]!.ids.length} memories)`, sets[0]!.agentId],
    ]
  : []) as [string, string | undefined][]) {
  const one = await runHttp(1, agentId);
  const four = await runHttp(4, agentId);
  console.log(
    `HTTP recall latency, ${label}: 1 client p50 ${pct(one, 50).toFixed(1)} / p95 ${pct(one, 95).toFixed(1)} ms; 4 clients p50 ${pct(four, 50).toFixed(1)} / p95 ${pct(four, 95).toFixed(1)} ms (${(pct(four, 50) / pct(one, 50)).toFixed(2)}× one client at p50)`,
  );
}
await app.close();
await deps.db.close();
await bdb.drop();
fs.rmSync(dataDir, { recursive: true, force: true });
