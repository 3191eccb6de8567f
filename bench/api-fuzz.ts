// The OpenAPI fuzzer of test/openapi-fuzz.test.ts at length (`npm run bench:api-fuzz`): every operation of
// /api/fn/openapi.json and /v1/openapi.json, sent schema-derived valid and invalid requests, each answer
// judged by Schemathesis's checks (not_a_server_error, status_code_conformance, response_schema_conformance)
// plus the error envelope. PGlite in memory, or PostgreSQL with BENCH_DATABASE_URL.
//
//   FUZZ_RUNS=30 npm run bench:api-fuzz [-- <seed>]   requests per operation (half valid); seed from the time
//                                                     unless given, printed so a run can be replayed
import fc from 'fast-check';
import {
  emptyStats,
  invalidRequests,
  judge,
  operations,
  responseValidator,
  send,
  validRequests,
} from '../test/openapi-fuzz-kit.ts';

const runs = Number(process.env.FUZZ_RUNS ?? 30);
const seed = Number(process.argv[2] ?? Date.now() % 2_147_483_647);
const started = Date.now();

if (process.env.BENCH_DATABASE_URL) {
  process.env.PIER_TEST_DB = 'postgres';
  process.env.TEST_DATABASE_URL = process.env.BENCH_DATABASE_URL;
}
// The harness reads PIER_TEST_DB when it loads: imported after the lines above.
const { testApp } = await import('../test/harness.ts');
const { fuzzAppOptions, fuzzFixture } = await import('../test/openapi-fuzz-setup.ts');
// FUZZ_LOG=1 writes the server log (with each 500's stack) to stderr.
const t = await testApp({
  ...fuzzAppOptions,
  ...(process.env.FUZZ_LOG ? { logStream: process.stderr } : {}),
});
const fx = await fuzzFixture(t);
const problems: string[] = [];
const rows: string[] = [];
const all = emptyStats();
for (const which of ['fn', 'v1'] as const) {
  const stats = emptyStats();
  const ops = operations(fx.docs[which]);
  const check = responseValidator(fx.docs[which]);
  for (const [i, o] of ops.entries()) {
    const hints = fx.hintsFor(o);
    const cases = [
      ...fc.sample(validRequests(o, hints), { numRuns: Math.ceil(runs / 2), seed: seed + i }),
      ...fc.sample(invalidRequests(o, hints), { numRuns: Math.floor(runs / 2), seed: seed + i }),
    ];
    for (const r of cases) {
      const res = await send(t.app, o, r, await fx.credentialFor(o));
      problems.push(...judge(o, r, res, check, stats, fx.allowed5xx));
    }
  }
  rows.push(line(which, ops.length, stats));
  for (const k of Object.keys(all) as (keyof typeof all)[]) all[k] += stats[k];
}
const total = operations(fx.docs.fn).length + operations(fx.docs.v1).length;
rows.push(line('both', total, all));
await fx.close();
await t.close();

function pct(n: number, d: number) {
  return d ? `${((100 * n) / d).toFixed(1)}%` : '—';
}
function line(name: string, ops: number, s: typeof all) {
  return [
    name.padEnd(5),
    `${ops} operations`,
    `${s.requests} requests`,
    `${s.serverErrors} 5xx`,
    `${s.gateway5xx} declared gateway 5xx`,
    `envelope ${pct(s.enveloped, s.errors)} of ${s.errors} errors`,
    `schema ${pct(s.conforming2xx, s.checked2xx)} of ${s.checked2xx} 2xx bodies`,
  ].join(' | ');
}

console.log(`api-fuzz: seed ${seed}, ${runs} requests per operation, ${t.deps.db.kind}`);
for (const r of rows) console.log(r);
console.log(`${problems.length} problems in ${((Date.now() - started) / 1000).toFixed(0)} s`);
// Each kind of problem once, with the first request that showed it.
const firsts = new Map<string, string>();
for (const p of problems)
  if (!firsts.has(p.replace(/; sent .*/s, ''))) firsts.set(p.replace(/; sent .*/s, ''), p);
for (const p of [...firsts.values()].slice(0, 40)) console.log(`  ${p.slice(0, 1600)}`);
process.exitCode = problems.length ? 1 : 0;
