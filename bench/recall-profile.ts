// bench/recall-profile: where one default recall's time goes on PGlite, statement by statement.
// Loads the chats of bench/memory-quality (about 6,000 memories), then runs recalls over the whole
// organization and within one chat's agent, timing PGlite's engine per protocol call (named by its last
// statement) and the JavaScript around it.
//   node bench/recall-profile.ts        (BENCH_PROFILE_QUERIES=200)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createAgent } from '../src/areas/memory/agents.ts';
import { memoryContext, type Scope } from '../src/areas/memory/context.ts';
import { storeMemories } from '../src/areas/memory/memories.ts';
import { RECALL_TUNING, recall } from '../src/areas/memory/recall.ts';
import { loadConfig } from '../src/config.ts';
import { Keyring } from '../src/core/crypto.ts';
import { createDeps } from '../src/create-deps.ts';
import { seedOrg } from '../test/seed.ts';
import { conversations } from './memory-quality-data.ts';

const QUERIES = Number(process.env.BENCH_PROFILE_QUERIES ?? 200);
// BENCH_EF=40,100: the whole organization's recall once per hnsw.ef_search value, side by side.
const EFS = (process.env.BENCH_EF ?? String(RECALL_TUNING.smallStoreEfSearch)).split(',').map(Number);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-bench-profile-'));
const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
const deps = await createDeps(config, { inMemory: true, keyring: Keyring.random() });
const ctx = memoryContext(deps);
const { org } = await seedOrg(deps);
const scope: Scope = { orgId: org.id, environment: 'production' };
const conv = conversations(10);
let firstAgent = '';
for (let c = 0; c < 10; c++) {
  const agent = await createAgent(ctx, scope, { name: `conversation ${c}` });
  firstAgent ||= agent.id;
  const turns = conv.turns.filter((t) => t.conv === c);
  for (let i = 0; i < turns.length; i += 100)
    await storeMemories(
      ctx,
      scope,
      agent.id,
      turns.slice(i, i + 100).map((t) => ({
        content: `${t.speaker}: ${t.text}`,
        type: 'episodic' as const,
        confidence: 1,
        metadata: {},
      })),
    );
}
await deps.db.exec('ANALYZE memories');

// Engine time per statement: each protocol call is charged to the last statement it runs — named by a
// simple Query ('Q'), or by a Bind ('B') of a statement whose Parse ('P') named its text, in this call or
// an earlier one (prepared statements are parsed once, decision 086). A call without either (PGlite's
// `query` sends Describe, Execute and Sync as calls of their own) is charged to the statement before it.
const pg = deps.db.pglite!;
const stats = new Map<string, { n: number; ms: number }>();
const dec = new TextDecoder();
const statementText = new Map<string, string>();
const label = (text: string) => {
  const flat = text.replace(/\s+/g, ' ');
  return flat.includes('kscore')
    ? `[recall] ${flat.slice(0, 90)}`
    : flat.includes('<=>')
      ? `[vector leg] ${flat.slice(0, 90)}`
      : flat.slice(0, 110);
};
const cstring = (b: Uint8Array, at: number) => dec.decode(b.subarray(at, b.indexOf(0, at)));
let current = '?';
function lastStatement(msg: Uint8Array): string {
  for (let at = 0; at + 5 <= msg.length; ) {
    const type = msg[at]!;
    const len = new DataView(msg.buffer, msg.byteOffset + at + 1, 4).getInt32(0);
    const body = at + 5;
    if (type === 0x51) current = label(cstring(msg, body));
    else if (type === 0x50) {
      const name = cstring(msg, body);
      const text = cstring(msg, msg.indexOf(0, body) + 1);
      statementText.set(name, text);
      current = label(text);
    } else if (type === 0x42) {
      const name = cstring(msg, msg.indexOf(0, body) + 1); // after the portal's name
      const text = statementText.get(name);
      if (text !== undefined) current = label(text);
    }
    at += 1 + len;
  }
  return current;
}
const original = pg.execProtocolStream.bind(pg);
(pg as unknown as { execProtocolStream: typeof original }).execProtocolStream = async (msg, opts) => {
  const current = lastStatement(msg);
  const t = performance.now();
  try {
    return await original(msg, opts);
  } finally {
    const e = stats.get(current) ?? { n: 0, ms: 0 };
    e.n++;
    e.ms += performance.now() - t;
    stats.set(current, e);
  }
};

// The last legs statement PGlite ran outside a transaction (one chat's recall: the exact path), for
// EXPLAIN ANALYZE at the end (BENCH_PROFILE_EXPLAIN=1).
let legs: { text: string; params: unknown[] } | null = null;
const query = pg.query.bind(pg);
(pg as unknown as { query: typeof query }).query = (async (text: string, params?: unknown[], o?: never) => {
  if (text.includes('kscore') && text.includes('<=>')) legs = { text, params: params ?? [] };
  return query(text, params, o);
}) as typeof query;

const questions = conv.questions.map((q) => q.question);
// BENCH_PREPARED=1,0: each case with the legs' statement prepared (PGlite) and not, side by side.
const PREPARED = (process.env.BENCH_PREPARED ?? '1').split(',').map((x) => x === '1');
for (const [label, agentId, ef, prepared] of PREPARED.flatMap((prepared) =>
  [
    ...EFS.map((ef) => [`whole organization, ef_search ${ef}`, undefined, ef] as const),
    ['one chat', firstAgent, RECALL_TUNING.smallStoreEfSearch] as const,
  ].map(
    ([l, a, e]) => [`${l}${PREPARED.length > 1 ? `, prepared ${prepared}` : ''}`, a, e, prepared] as const,
  ),
)) {
  RECALL_TUNING.smallStoreEfSearch = ef;
  RECALL_TUNING.preparedLegs = prepared;
  for (let i = 0; i < 50; i++)
    await recall(ctx, scope, { query: questions[i]!, limit: 10, agentId } as never); // warm-up
  await ctx.access.idle();
  stats.clear();
  const t0 = performance.now();
  const times: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    const s = performance.now();
    await recall(ctx, scope, { query: questions[(i * 7) % questions.length]!, limit: 10, agentId } as never);
    times.push(performance.now() - s);
  }
  await ctx.access.idle();
  const wall = performance.now() - t0;
  const engine = [...stats.values()].reduce((a, e) => a + e.ms, 0);
  times.sort((a, b) => a - b);
  console.log(
    `\n${label}: ${QUERIES} recalls, p50 ${times[QUERIES >> 1]!.toFixed(2)} ms; per recall: wall ${(wall / QUERIES).toFixed(2)} ms, engine ${(engine / QUERIES).toFixed(2)} ms, other ${((wall - engine) / QUERIES).toFixed(2)} ms`,
  );
  for (const [text, e] of [...stats].sort((a, b) => b[1].ms - a[1].ms).slice(0, 12))
    console.log(`  ${(e.ms / QUERIES).toFixed(3)} ms/recall  ${String(e.n).padStart(5)} calls  ${text}`);
}
if (process.env.BENCH_PROFILE_EXPLAIN && legs) {
  const l = legs as { text: string; params: unknown[] };
  for (const settings of [
    '',
    "SET LOCAL hnsw.ef_search = 100; SET LOCAL hnsw.iterative_scan = 'relaxed_order'; SET LOCAL enable_sort = off;",
  ]) {
    await pg.transaction(async (tx) => {
      if (settings) await tx.exec(settings);
      const r = await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${l.text}`, l.params);
      console.log(`\n${settings || 'no settings'}\n${r.rows.map((x) => x['QUERY PLAN']).join('\n')}`);
    });
  }
}
await deps.db.close();
fs.rmSync(dataDir, { recursive: true, force: true });
