// bench/memory: ingest, recall latency beside raw SQL, HNSW recall@10 against the exact scan, filtered
// recall, and retrieval quality of the local embedder on a labelled paraphrase set.
//   npm run bench:memory            (100,000 memories; BENCH_N=20000 for a quick run)
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/pier_ci npm run bench:memory   (PostgreSQL + pgvector)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql as dsql } from 'drizzle-orm';
import { createAgent } from '../src/areas/memory/agents.ts';
import { memoryContext, type Scope } from '../src/areas/memory/context.ts';
import { contentHash, toVectorLiteral } from '../src/areas/memory/embedding.ts';
import { storeMemories } from '../src/areas/memory/memories.ts';
import { weightedQueryVector } from '../src/areas/memory/query-weights.ts';
import { RECALL_TUNING, recall, vectorTopKSql } from '../src/areas/memory/recall.ts';
import { termStats } from '../src/areas/memory/term-stats.ts';
import { embedderSql, HNSW_WITH, indexName, literal } from '../src/areas/memory/vector-indexes.ts';
import { configuredEmbedderId } from '../src/areas/models/embedders.ts';
import { loadConfig } from '../src/config.ts';
import { Keyring } from '../src/core/crypto.ts';
import { createDeps } from '../src/create-deps.ts';
import { seedOrg } from '../test/seed.ts';
import { benchDatabase } from './bench-db.ts';
import { LABELLED, memoryText, rng } from './memory-corpus.ts';

const N = Number(process.env.BENCH_N ?? 100_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);
const BATCH = 100;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const ms = (x: number) => `${x.toFixed(2)} ms`;
const now = () => performance.now();

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-bench-mem-'));
const bdb = await benchDatabase();
const config = loadConfig({
  DATA_DIR: dataDir,
  LOG_LEVEL: 'silent',
  ...(bdb.url ? { DATABASE_URL: bdb.url } : {}),
});
const deps = await createDeps(config, { inMemory: !bdb.url, keyring: Keyring.random() });
const db = deps.db;
const ctx = memoryContext(deps);
// A real organization: its embedder is recorded per organization (model_embedders references orgs).
const { org } = await seedOrg(deps);
const scope: Scope = { orgId: org.id, environment: 'production' };
const EMBEDDER = configuredEmbedderId(deps);
const DIM = 384;
const INDEX = indexName(EMBEDDER, DIM);
const CAST = `vector(${DIM})`;
const r = rng(42);

console.log(
  `bench/memory: ${N} memories, ${QUERIES} queries, ${bdb.label}, embedder ${EMBEDDER} (index ${INDEX})`,
);
console.log(`HNSW m=16 ef_construction=64; ef_search=${RECALL_TUNING.efSearch}\n`);

// 1. Batch ingest through the service (embedding + dedup + insert). On PGlite each HNSW insertion costs
// milliseconds (WASM), so the first SAMPLE memories are stored with the index maintained (the rate a
// live store sees) and the rest bulk-loaded with the index dropped and rebuilt (how to load a large
// import) — both rates are printed.
const SAMPLE = Math.min(N, Number(process.env.BENCH_SAMPLE ?? 5000));
let created = 0;
async function ingest(from: number, to: number): Promise<number> {
  const t = now();
  for (let i = from; i < to; i += BATCH) {
    const items = Array.from({ length: Math.min(BATCH, to - i) }, (_, j) => ({
      content: `${memoryText(r)} (note ${i + j})`,
      type: 'episodic' as const,
      confidence: 1,
      metadata: { bucket: (i + j) % 10, shard: (i + j) % 100 },
    }));
    created += (await storeMemories(ctx, scope, undefined, items)).created;
    if ((i / BATCH) % 50 === 49)
      process.stdout.write(`  ingested ${i + BATCH} (${((now() - t) / 1000).toFixed(0)} s)\r`);
  }
  return (now() - t) / 1000;
}
const liveSec = await ingest(0, SAMPLE);
console.log(
  `ingest, HNSW maintained: ${SAMPLE} memories in ${liveSec.toFixed(1)} s = ${(SAMPLE / liveSec).toFixed(0)} memories/s (batches of ${BATCH})`,
);
// The bulk path of a large import: embed in batches, then one INSERT … SELECT FROM unnest(…) per 1,000
// rows (the same on both databases: a handful of array parameters, where a row-per-VALUES insert of
// 1,000 rows would need 13,000), with the HNSW index dropped and built once after. The corpus has no
// duplicates ("(note i)"), so the service's duplicate folding has nothing to do here.
const BULK = 1000;
async function bulkIngest(from: number, to: number): Promise<number> {
  const t = now();
  const at = deps.clock.now().toISOString();
  for (let i = from; i < to; i += BULK) {
    const n = Math.min(BULK, to - i);
    const texts = Array.from({ length: n }, (_, j) => `${memoryText(r)} (note ${i + j})`);
    const vecs = (await deps.models.embed(texts, { model: EMBEDDER })).vectors.map(toVectorLiteral);
    await db.query(
      `INSERT INTO memories (org_id, environment, content, content_hash, type, tier, confidence, metadata,
                             embedding, embedding_model, created_at, updated_at)
       SELECT $1, 'production', c, h, 'episodic', 'warm', 1, md::jsonb, v::vector, $2, $3, $3
         FROM unnest($4::text[], $5::text[], $6::text[], $7::text[]) AS u(c, h, md, v)`,
      [
        scope.orgId,
        EMBEDDER,
        at,
        texts,
        texts.map((c) => contentHash(c)),
        texts.map((_, j) => JSON.stringify({ bucket: (i + j) % 10, shard: (i + j) % 100 })),
        vecs,
      ],
    );
    created += n;
    if ((i / BULK) % 10 === 9)
      process.stdout.write(`  ingested ${i + BULK} (${((now() - t) / 1000).toFixed(0)} s)\r`);
  }
  return (now() - t) / 1000;
}
if (N > SAMPLE) {
  await db.exec(`DROP INDEX ${INDEX}`);
  const bulkSec = await bulkIngest(SAMPLE, N);
  const t = now();
  // one statement string: on PostgreSQL each exec may take another pooled connection, and SET is per session
  await db.exec(
    `SET maintenance_work_mem = '512MB'; CREATE INDEX ${INDEX} ON memories USING hnsw ((embedding::${CAST}) vector_cosine_ops) WITH (${HNSW_WITH}) WHERE embedding_model = ${literal(EMBEDDER)}`,
  );
  const buildSec = (now() - t) / 1000;
  const rest = N - SAMPLE;
  console.log(
    `ingest, bulk (INSERT from unnest, 1,000 a statement; index rebuilt after): ${rest} memories in ${bulkSec.toFixed(1)} s = ${(rest / bulkSec).toFixed(0)} memories/s; HNSW build ${buildSec.toFixed(1)} s; overall ${(rest / (bulkSec + buildSec)).toFixed(0)} memories/s`,
  );
}
await db.exec('ANALYZE memories'); // what the memory.tiers job does on PGlite
console.log(`stored: ${created} memories`);

// Queries: fresh sentences from the same distribution (not stored), embedded once.
const qr = rng(7);
const queries = Array.from({ length: QUERIES }, () => memoryText(qr));
const qvecs = (await deps.models.embed(queries, { model: EMBEDDER })).vectors.map(toVectorLiteral);
const scopeWhere = `org_id = '${scope.orgId}' AND environment = 'production' AND tier = ANY(ARRAY['hot','warm'])
  AND embedding_model = ${literal(EMBEDDER)} AND embedding IS NOT NULL`;
const dist = `(embedding::${CAST} <=> $1::${CAST})`;

async function topK(vec: string, opts: { exact: boolean; ef?: number; where?: string; k?: number }) {
  const where = opts.where ? `${scopeWhere} AND ${opts.where}` : scopeWhere;
  const order = opts.exact ? `${dist} + 0` : dist;
  const sql = `SELECT id FROM memories WHERE ${where} ORDER BY ${order} LIMIT ${opts.k ?? 10}`;
  if (opts.exact) return (await db.query<{ id: string }>(sql, [vec])).rows.map((x) => x.id);
  const res = await db.transaction(async (tx) => {
    await tx.query(
      `SELECT set_config('hnsw.ef_search', $1, true), set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('enable_sort', 'off', true)`,
      [String(opts.ef ?? RECALL_TUNING.efSearch)],
    );
    return tx.query<{ id: string }>(sql, [vec]);
  });
  return res.rows.map((x) => x.id);
}

if (process.env.BENCH_EXPLAIN) {
  // The service's own vector-leg statement (recall.ts builds it the same way), with its settings: the
  // plan must walk the embedder's partial HNSW index, not scan and sort.
  const e = embedderSql(EMBEDDER, DIM, qvecs[0]!, 0);
  const where = dsql`m.org_id = ${scope.orgId} AND m.environment = 'production'
    AND m.tier = ANY(ARRAY['hot', 'warm']::text[]) AND ${e.filter}`;
  const stmt = vectorTopKSql(where, e.distance, 30, false, dsql`greatest(0, 1 - ${e.distance})`);
  const plan = await db.orm.transaction(async (tx) => {
    await tx.execute(dsql`SELECT set_config('hnsw.ef_search', '100', true),
      set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('enable_sort', 'off', true)`);
    return tx.execute(dsql`EXPLAIN (ANALYZE, BUFFERS) ${stmt}`);
  });
  const lines = (plan as unknown as { rows: Record<string, string>[] }).rows.map((x) => x['QUERY PLAN']!);
  console.log(lines.map((l) => (l.length > 200 ? `${l.slice(0, 200)}…` : l)).join('\n'));
}

// 2. Exact ground truth, then HNSW fidelity (its top 10 against the exact scan's, same vectors — how well
// the index reproduces the embedder's ranking, not whether the right memory comes back) per ef_search.
const exactTimes: number[] = [];
const truth: string[][] = [];
for (const v of qvecs) {
  const s = now();
  truth.push(await topK(v, { exact: true }));
  exactTimes.push(now() - s);
}
console.log(`exact scan top-10: p50 ${ms(pct(exactTimes, 50))}, p99 ${ms(pct(exactTimes, 99))}`);
const overlap = (a: string[], b: string[]) => a.filter((x) => b.includes(x)).length / Math.max(1, b.length);
for (const ef of [40, 64, 100, 200]) {
  let rec = 0;
  const times: number[] = [];
  for (let i = 0; i < qvecs.length; i++) {
    const s = now();
    const got = await topK(qvecs[i]!, { exact: false, ef });
    times.push(now() - s);
    rec += overlap(got, truth[i]!);
  }
  console.log(
    `HNSW ef_search=${ef}: ANN fidelity (top-10 overlap with the exact scan, not retrieval quality) ${(rec / qvecs.length).toFixed(3)}, p50 ${ms(pct(times, 50))}, p99 ${ms(pct(times, 99))}`,
  );
}

// 3. Recall through the service (embedding + filters + transaction) beside the raw SQL top-10.
const rawTimes: number[] = [];
const svcTimes: number[] = [];
for (let i = 0; i < 20; i++) await recall(ctx, scope, { query: queries[i]!, limit: 10, mode: 'vector' });
for (let i = 0; i < queries.length; i++) {
  let s = now();
  await topK(qvecs[i]!, { exact: false });
  rawTimes.push(now() - s);
  s = now();
  await recall(ctx, scope, { query: queries[i]!, limit: 10, mode: 'vector' });
  svcTimes.push(now() - s);
}
await ctx.access.idle();
const rawP50 = pct(rawTimes, 50);
const svcP50 = pct(svcTimes, 50);
console.log(
  `recall (service) p50 ${ms(svcP50)}, p99 ${ms(pct(svcTimes, 99))} | raw SQL p50 ${ms(rawP50)}, p99 ${ms(pct(rawTimes, 99))} | ratio p50 ${(svcP50 / rawP50).toFixed(2)}x`,
);
const hyTimes: number[] = [];
for (const q of queries.slice(0, 100)) {
  const s = now();
  await recall(ctx, scope, { query: q, limit: 10, mode: 'hybrid' });
  hyTimes.push(now() - s);
}
console.log(`recall hybrid (service) p50 ${ms(pct(hyTimes, 50))}, p99 ${ms(pct(hyTimes, 99))}`);

// 4. Filtered recall: a metadata filter matching 10% (HNSW + iterative scan) and 1% (exact path). The
// service's vector leg embeds the query with IDF weights (decision 030), so the ground truth is the exact
// scan of that same weighted vector (with the plain vector it would measure the weighting, not the index).
const stats = await termStats(deps, scope);
const wvecs = await Promise.all(
  queries.map(async (q, i) => {
    const w = await weightedQueryVector(deps, stats, EMBEDDER, q, DIM);
    return w ? toVectorLiteral(w) : qvecs[i]!;
  }),
);
for (const [label, where, filter] of [
  ['metadata 10%', `metadata @> '{"bucket":3}'`, { bucket: 3 }],
  ['metadata 1%', `metadata @> '{"shard":42}'`, { shard: 42 }],
] as const) {
  let rec = 0;
  let full = 0;
  const times: number[] = [];
  const n = Math.min(100, queries.length);
  for (let i = 0; i < n; i++) {
    const exact = await topK(wvecs[i]!, { exact: true, where });
    const s = now();
    const got = await recall(ctx, scope, { query: queries[i]!, limit: 10, mode: 'vector', metadata: filter });
    times.push(now() - s);
    rec += overlap(
      got.memories.map((m) => m.id),
      exact,
    );
    if (got.memories.length === 10) full++;
  }
  console.log(
    `filtered (${label}): recall@10 ${(rec / n).toFixed(3)}, full pages ${full}/${n}, p50 ${ms(pct(times, 50))}, p99 ${ms(pct(times, 99))}`,
  );
}
await ctx.access.idle();

// 5. Retrieval quality of the local embedder: paraphrased questions → the right fact in the top 5.
const agent = await createAgent(ctx, scope, { name: 'labelled' });
const stored = await storeMemories(
  ctx,
  scope,
  agent.id,
  LABELLED.map((l) => ({ content: l.fact, type: 'semantic' as const, confidence: 1 })),
);
let hitAgent = 0;
let hitAll = 0;
for (let i = 0; i < LABELLED.length; i++) {
  const want = stored.memories[i]!.id;
  const a = await recall(ctx, scope, {
    query: LABELLED[i]!.query,
    agentId: agent.id,
    limit: 5,
    mode: 'vector',
  });
  if (a.memories.some((m) => m.id === want)) hitAgent++;
  const b = await recall(ctx, scope, { query: LABELLED[i]!.query, limit: 5, mode: 'hybrid' });
  if (b.memories.some((m) => m.id === want)) hitAll++;
}
console.log(
  `labelled set (${LABELLED.length} paraphrased queries): recall@5 ${(hitAgent / LABELLED.length).toFixed(3)} within the agent's ${LABELLED.length} memories; ${(hitAll / LABELLED.length).toFixed(3)} hybrid across all ${N + LABELLED.length}`,
);
await ctx.access.idle();
await db.close();
await bdb.drop();
fs.rmSync(dataDir, { recursive: true, force: true });
