// bench/memory-quality: does recall bring back what was said? Long multi-session chats stored one turn
// per memory (bench/memory-quality-data.ts), questions with the turns that answer them, and short notes;
// evidence recall@5/@10 per question kind for each recall mode against plain BM25 computed here over the
// same texts in the same run; then recall latency, alone and with four concurrent callers.
//   node bench/memory-quality.ts                       (PGlite in memory)
//   BENCH_DATABASE_URL=postgres://… node bench/memory-quality.ts   (PostgreSQL with pgvector)
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
import { conversations, type Kind } from './memory-quality-data.ts';
import { notes } from './memory-quality-notes.ts';

const N_CONV = Number(process.env.BENCH_CONVERSATIONS ?? 10);
const N_NOTES = Number(process.env.BENCH_NOTES ?? 600);
const LAT_QUERIES = Number(process.env.BENCH_LATENCY_QUERIES ?? 200);
// BENCH_BUDGET=n: run everything with another BM25 candidate budget (quality and latency side by side).
if (process.env.BENCH_BUDGET) KEYWORD_TUNING.candidateBudget = Number(process.env.BENCH_BUDGET);
const bdb = await benchDatabase();
const dbUrl = bdb.url;
// BENCH_SWEEP=1: also score the default mode under other fusions (set through RECALL_TUNING, restored
// after each call): reciprocal rank fusion against a weighted sum of min-max normalised scores, and a
// smaller keyword candidate budget (cheaper BM25 leg).
type Tuning = { fusion: 'rrf' | 'relative'; rrfK: number; wv: number; budget: number };
const SWEEP: [string, Tuning][] | null = process.env.BENCH_SWEEP
  ? [
      ['rrf k=10 wv=0.5 (default)', { fusion: 'rrf', rrfK: 10, wv: 0.5, budget: 2000 }],
      ['rrf k=60 wv=1', { fusion: 'rrf', rrfK: 60, wv: 1, budget: 2000 }],
      ['relative wv=0.25', { fusion: 'relative', rrfK: 10, wv: 0.25, budget: 2000 }],
      ['relative wv=0.5', { fusion: 'relative', rrfK: 10, wv: 0.5, budget: 2000 }],
      ['relative wv=1', { fusion: 'relative', rrfK: 10, wv: 1, budget: 2000 }],
      ['rrf k=10 wv=0.5 budget=600', { fusion: 'rrf', rrfK: 10, wv: 0.5, budget: 600 }],
    ]
  : null;
async function withTuning<T>(t: Tuning, fn: () => Promise<T>): Promise<T> {
  const saved = { ...RECALL_TUNING, localLegWeights: RECALL_TUNING.localLegWeights };
  const budget = KEYWORD_TUNING.candidateBudget;
  Object.assign(RECALL_TUNING, { fusion: t.fusion, rrfK: t.rrfK, localLegWeights: [t.wv, 1] });
  KEYWORD_TUNING.candidateBudget = t.budget;
  try {
    return await fn();
  } finally {
    Object.assign(RECALL_TUNING, saved);
    KEYWORD_TUNING.candidateBudget = budget;
  }
}

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

// Plain Okapi BM25 (k1 1.2, b 0.75, idf ln(1 + (N − df + .5)/(df + .5))) over lowercase letter/digit
// tokens, no stemming, no stop words: the floor every retrieval system is measured against.
function bm25Index(texts: string[]) {
  const tok = (t: string) =>
    t
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter(Boolean);
  const docs = texts.map(tok);
  const df = new Map<string, number>();
  for (const d of docs) for (const w of new Set(d)) df.set(w, (df.get(w) ?? 0) + 1);
  const avgdl = docs.reduce((a, d) => a + d.length, 0) / docs.length;
  const N = docs.length;
  return (query: string, k: number): number[] => {
    const q = [...new Set(tok(query))];
    const scores = docs.map((d, i) => {
      let s = 0;
      for (const w of q) {
        const tf = d.filter((x) => x === w).length;
        if (!tf) continue;
        const n = df.get(w)!;
        const idf = Math.log(1 + (N - n + 0.5) / (n + 0.5));
        s += (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * d.length) / avgdl));
      }
      return [s, i] as const;
    });
    return scores
      .filter((x) => x[0] > 0)
      .sort((a, b) => b[0] - a[0] || a[1] - b[1])
      .slice(0, k)
      .map((x) => x[1]);
  };
}

// 1. Store: one agent per conversation (as an assistant would keep one memory per user), one for notes.
const conv = conversations(N_CONV);
const nts = notes(N_NOTES);
type Set_ = { agentId: string; texts: string[]; ids: string[] };
let stored = 0; // memories created (a turn said twice word for word is folded into one memory)
async function store(
  name: string,
  texts: string[],
  meta: (i: number) => Record<string, unknown>,
): Promise<Set_> {
  const agent = await createAgent(ctx, scope, { name });
  const ids: string[] = [];
  for (let i = 0; i < texts.length; i += 100) {
    const items = texts.slice(i, i + 100).map((content, j) => ({
      content,
      type: 'episodic' as const,
      confidence: 1,
      metadata: meta(i + j),
    }));
    const r = await storeMemories(ctx, scope, agent.id, items);
    ids.push(...r.memories.map((m) => m.id));
    stored += r.created;
  }
  return { agentId: agent.id, texts, ids };
}
const t0 = now();
const sets: Set_[] = [];
for (let c = 0; c < N_CONV; c++) {
  const turns = conv.turns.filter((t) => t.conv === c);
  sets.push(
    await store(
      `conversation ${c}`,
      turns.map((t) => `${t.speaker}: ${t.text}`),
      (i) => ({ session: turns[i]!.session, date: turns[i]!.date }),
    ),
  );
}
const noteSet = await store(
  'notes',
  nts.notes.map((n) => n.text),
  () => ({}),
);
await deps.db.exec('ANALYZE memories'); // fresh statistics on both (PGlite has no autovacuum)
const total = stored;
console.log(
  `bench/memory-quality on ${bdb.label}: ${N_CONV} conversations, ${conv.turns.length} turns, ${conv.questions.length} questions; ${nts.notes.length} notes, ${nts.questions.length} questions; ${total} memories created in ${((now() - t0) / 1000).toFixed(1)} s\n`,
);

// 2. Quality: evidence recall@k = share of a question's evidence turns in the top k, averaged.
const MODES = [
  ['default', undefined],
  ['vector', 'vector'],
  ['hybrid', 'hybrid'],
  ['keyword', 'keyword'],
] as const;
type Score = { at5: number; at10: number; n: number };
const zero = (): Score => ({ at5: 0, at10: 0, n: 0 });
function score(s: Score, got: number[], want: number[]) {
  s.at5 += want.filter((w) => got.slice(0, 5).includes(w)).length / want.length;
  s.at10 += want.filter((w) => got.slice(0, 10).includes(w)).length / want.length;
  s.n++;
}
const systems = ['BM25', ...MODES.map((m) => m[0])];
const table = new Map<string, Map<string, Score>>(); // kind → system → score
const cell = (kind: string, sys: string) => {
  const row = table.get(kind) ?? new Map<string, Score>();
  table.set(kind, row);
  const s = row.get(sys) ?? zero();
  row.set(sys, s);
  return s;
};
async function evaluate(set: Set_, qs: { question: string; evidence: number[]; kind: string }[]) {
  const bm25 = bm25Index(set.texts);
  const pos = new Map(set.ids.map((id, i) => [id, i]));
  for (const q of qs) {
    const b = bm25(q.question, 10);
    score(cell(q.kind, 'BM25'), b, q.evidence);
    if (q.kind !== 'notes') score(cell('all conversations', 'BM25'), b, q.evidence);
    for (const [name, mode] of MODES) {
      const r = await recall(
        ctx,
        scope,
        { query: q.question, agentId: set.agentId, limit: 10, ...(mode ? { mode } : {}) } as never,
        { countAccess: false },
      );
      const got = r.memories.map((m) => pos.get(m.id)!);
      score(cell(q.kind, name), got, q.evidence);
      if (q.kind !== 'notes') score(cell('all conversations', name), got, q.evidence);
    }
    for (const [name, t] of SWEEP ?? []) {
      const r = await withTuning(t, () =>
        recall(ctx, scope, { query: q.question, agentId: set.agentId, limit: 10 } as never, {
          countAccess: false,
        }),
      );
      const got = r.memories.map((m) => pos.get(m.id)!);
      score(cell(q.kind === 'notes' ? 'notes' : 'all conversations', name), got, q.evidence);
    }
  }
}
const tq = now();
// BENCH_QUALITY=0: latency only (e.g. a second run on PostgreSQL).
const QUALITY = process.env.BENCH_QUALITY !== '0';
for (let c = 0; c < (QUALITY ? N_CONV : 0); c++) {
  const base = conv.turns.findIndex((t) => t.conv === c);
  const qs = conv.questions
    .filter((q) => q.conv === c)
    .map((q) => ({ ...q, evidence: q.evidence.map((e) => e - base) }));
  await evaluate(sets[c]!, qs);
}
if (QUALITY)
  await evaluate(
    noteSet,
    nts.questions.map((q) => ({ ...q, kind: 'notes' })),
  );
const cellFmt = (s: Score) => `${(s.at5 / s.n).toFixed(3)} / ${(s.at10 / s.n).toFixed(3)}`;
console.log(`evidence recall@5 / @10 (${((now() - tq) / 1000).toFixed(1)} s); ratio = recall@10 / BM25's`);
console.log(`| kind | n | ${systems.join(' | ')} | default ÷ BM25 @10 |`);
console.log(`|---|---|${systems.map(() => '---|').join('')}---|`);
const kinds: string[] = ['single-hop', 'multi-hop', 'temporal', 'open-domain', 'all conversations', 'notes'];
for (const kind of QUALITY ? kinds : []) {
  const row = table.get(kind);
  if (!row) continue;
  const b = row.get('BM25')!;
  const d = row.get('default')!;
  console.log(
    `| ${kind} | ${b.n} | ${systems.map((s) => cellFmt(row.get(s)!)).join(' | ')} | **${(d.at10 / d.n / (b.at10 / b.n)).toFixed(2)}×** |`,
  );
}
void (null as unknown as Kind);

// The same questions over the whole organization (every chat and the notes: the HNSW path), default mode,
// against the same recall with its vector leg scanned exactly: what the approximate walk costs in evidence
// found (hnsw.ef_search, decision 092). Other chats' turns compete here, so it is lower than per chat.
if (QUALITY) {
  const ev = conv.questions.map((q) => {
    const base = conv.turns.findIndex((t) => t.conv === q.conv);
    return q.evidence.map((e) => sets[q.conv]!.ids[e - base]!);
  });
  const at10 = async () => {
    let sum = 0;
    for (let i = 0; i < conv.questions.length; i++) {
      const r = await recall(ctx, scope, { query: conv.questions[i]!.question, limit: 10 } as never, {
        countAccess: false,
      });
      const got = r.memories.map((m) => m.id);
      sum += ev[i]!.filter((id) => got.includes(id)).length / ev[i]!.length;
    }
    return sum / conv.questions.length;
  };
  const walk = await at10();
  const exactMax = RECALL_TUNING.exactScanMax;
  RECALL_TUNING.exactScanMax = Number.MAX_SAFE_INTEGER;
  const exact = await at10().finally(() => {
    RECALL_TUNING.exactScanMax = exactMax;
  });
  console.log(
    `whole organization (${total} memories), default mode, evidence recall@10: HNSW (ef_search ${RECALL_TUNING.smallStoreEfSearch}) ${walk.toFixed(3)}, exact vector leg ${exact.toFixed(3)} (${(walk / exact).toFixed(3)}×)`,
  );
}
if (SWEEP)
  for (const kind of ['all conversations', 'notes']) {
    const row = table.get(kind)!;
    const b = row.get('BM25')!;
    for (const [name] of SWEEP) {
      const c = row.get(name)!;
      console.log(
        `sweep ${kind}: ${name}: ${cellFmt(c)} (${(c.at10 / c.n / (b.at10 / b.n)).toFixed(2)}× BM25)`,
      );
    }
  }

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
if (!HTTP_ONLY) await run(1); // warm-up (caches, plans)
for (const [label, agentId] of HTTP_ONLY
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
await runHttp(4); // warm-up (caches, plans, connections)
for (const [label, agentId] of [
  [`whole organization (${total} memories)`, undefined],
  [`one conversation (${sets[0]!.ids.length} memories)`, sets[0]!.agentId],
] as const) {
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
