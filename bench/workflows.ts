// Workflows (issue 19), in one run on one database:
//  1. a bare job round trip on the job queue: a chain of no-op jobs, each enqueuing the next from its handler,
//     timed from one handler's start to the next's (insert + NOTIFY + claim + the previous job's completion);
//  2. a 100-step chain of no-op steps (`transform` with expression `1`): per-step time from one step's
//     completion to the next's (promotion, NOTIFY, claim, the step's reads, its completion), and the dispatch
//     part alone (a step's completion to the next step's start) — against (1) at p50;
//  3. a 100-wide fan-out (a root, 100 steps on it, one join), at the default per-run parallel cap;
//  4. N concurrent small runs (two chained steps each, default 1,000) started at once: all must complete.
//  5. a chain of 20 `code` steps (`return 1`) against a chain of 20 `transform` steps, three runs of each: the
//     time a step, the ratio (target ≤ 1.5x) and the code step's overhead beyond a transform (target < 20 ms).
// The engine runs in this process (worker role) as `pier serve` would.
//
//   npm run bench:workflows [-- --steps 100 --width 100 --runs 1000 --jobs 100]
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/pier_ci   run on a fresh PostgreSQL database instead
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { startRun } from '../src/areas/workflows/runs.ts';
import { createBody, runBody } from '../src/areas/workflows/schema.ts';
import { createWorkflow } from '../src/areas/workflows/workflows.ts';
import { startBackground } from '../src/background.ts';
import { loadConfig } from '../src/config.ts';
import { Keyring } from '../src/core/crypto.ts';
import { defineJob } from '../src/core/jobs.ts';
import { createDeps } from '../src/create-deps.ts';
import { seedProject, seedV1Tenant } from '../test/seed.ts';
import { benchDatabase } from './bench-db.ts';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const STEPS = arg('steps', 100);
const WIDTH = arg('width', 100);
const RUNS = arg('runs', 1000);
const JOBS = arg('jobs', 100);

const bench = await benchDatabase();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-bench-wf-'));
const config = loadConfig({
  DATA_DIR: dataDir,
  LOG_LEVEL: 'silent',
  PUBLIC_URL: 'http://pier.bench',
  ...(bench.url ? { DATABASE_URL: bench.url } : {}),
});
const deps = await createDeps(config, { keyring: Keyring.random(), inMemory: true });

// The bare job: a no-op whose handler notes when it started and enqueues the next link of the chain.
const jobStarts: number[] = [];
let chainDone: () => void = () => {};
const noop = defineJob({
  name: 'bench.noop',
  schema: z.object({ i: z.number() }),
  handle: async ({ i }) => {
    jobStarts.push(performance.now());
    if (i + 1 < JOBS) await (deps.jobs as never as Enq).enqueue('bench.noop', { i: i + 1 });
    else chainDone();
  },
});
type Enq = { enqueue(name: string, data: unknown): Promise<unknown> };
(deps.jobs as unknown as { register(d: unknown[]): void }).register([noop]);
const stop = await startBackground(deps, { worker: true });

const tenant = await seedV1Tenant(deps);
const project = await seedProject(deps, tenant.org);
const scope = { orgId: tenant.org.id, environment: 'production' };

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const gaps = (xs: number[]) => xs.slice(1).map((x, i) => x - xs[i]!);
const ms = (n: number) => `${n.toFixed(2)} ms`;
const noopStep = (id: string, dependsOn?: string[]) => ({
  id,
  type: 'transform',
  expression: '1',
  ...(dependsOn ? { dependsOn } : {}),
});
const workflow = async (slug: string, steps: unknown[]) =>
  (
    await createWorkflow(
      deps,
      scope,
      createBody.parse({ projectSlug: project.slug, slug, name: slug, steps }),
    )
  ).id;
const run = (workflowId: string) =>
  startRun(deps, scope, workflowId, runBody.parse({ projectSlug: project.slug }));

async function waitRuns(ids: string[], timeoutMs: number): Promise<Record<string, number>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await deps.db.query<{ status: string; n: number }>(
      'select status, count(*)::int as n from workflow_runs where id = any($1::uuid[]) group by status',
      [ids],
    );
    const by = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
    const open = (by.pending ?? 0) + (by.running ?? 0);
    if (!open || Date.now() > end) return by;
    await new Promise((ok) => setTimeout(ok, 100));
  }
}

type StepTimes = { step_id: string; started_at: Date | string; completed_at: Date | string };
async function stepTimes(runId: string): Promise<StepTimes[]> {
  const { rows } = await deps.db.query<StepTimes>(
    'select step_id, started_at, completed_at from workflow_step_states where run_id = $1 order by completed_at',
    [runId],
  );
  return rows;
}
const t = (v: Date | string) => new Date(v).getTime();

console.log(
  `database: ${bench.label}; load average ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);

// 1. Bare job chain (twice: the first warms the queue up).
const jobChain = async () => {
  jobStarts.length = 0;
  const done = new Promise<void>((ok) => {
    chainDone = ok;
  });
  await (deps.jobs as never as Enq).enqueue('bench.noop', { i: 0 });
  await done;
  return gaps(jobStarts);
};
await jobChain();
const jobGaps = await jobChain();
const jobP50 = p50(jobGaps);
console.log(`bare job round trip (chain of ${JOBS}): p50 ${ms(jobP50)}, mean ${ms(avg(jobGaps))}`);

// 2. A chain of no-op steps (a short warm-up run first).
const chainSteps = Array.from({ length: STEPS }, (_, i) => noopStep(`s${i}`, i ? [`s${i - 1}`] : undefined));
const chainId = await workflow('chain', chainSteps);
const warm = await workflow('warm', chainSteps.slice(0, 5));
await waitRuns([(await run(warm)).id], 60_000);
const c0 = performance.now();
const chainRun = (await run(chainId)).id;
const chainEnd = await waitRuns([chainRun], 240_000);
const chainWall = performance.now() - c0;
const times = await stepTimes(chainRun);
const cycle = gaps(times.map((s) => t(s.completed_at)));
const dispatch = times.slice(1).map((s, i) => t(s.started_at) - t(times[i]!.completed_at));
const stepP50 = p50(cycle);
console.log(
  `${STEPS}-step chain: ${JSON.stringify(chainEnd)} in ${ms(chainWall)}; per step p50 ${ms(stepP50)} ` +
    `(dispatch alone p50 ${ms(p50(dispatch))}); ratio to the bare job ${(stepP50 / jobP50).toFixed(2)}x`,
);

// 3. Fan-out.
const fanSteps = [
  noopStep('root'),
  ...Array.from({ length: WIDTH }, (_, i) => noopStep(`f${i}`, ['root'])),
  noopStep(
    'join',
    Array.from({ length: WIDTH }, (_, i) => `f${i}`),
  ),
];
const fanId = await workflow('fan', fanSteps);
const f0 = performance.now();
const fanRun = (await run(fanId)).id;
const fanEnd = await waitRuns([fanRun], 240_000);
const fanWall = performance.now() - f0;
const fanTimes = await stepTimes(fanRun);
const fanSpan = t(fanTimes.at(-1)!.completed_at) - Math.min(...fanTimes.map((s) => t(s.started_at)));
console.log(
  `${WIDTH}-wide fan-out (+ root and join, run parallelism ${config.workflows.runParallelism}, ` +
    `${config.workflows.workerSlots} worker slots): ${JSON.stringify(fanEnd)} in ${ms(fanWall)}; ` +
    `${ms(fanSpan / (WIDTH + 2))} per step`,
);

// 4. Many concurrent small runs.
const smallId = await workflow('small', [noopStep('a'), noopStep('b', ['a'])]);
const r0 = performance.now();
const ids: string[] = [];
// Started by 50 callers at once, as many API requests would.
let next = 0;
await Promise.all(
  Array.from({ length: 50 }, async () => {
    while (next < RUNS) {
      next++;
      ids.push((await run(smallId)).id);
    }
  }),
);
const started = performance.now() - r0;
const many = await waitRuns(ids, 240_000);
const manyWall = performance.now() - r0;
const lost = RUNS - (many.completed ?? 0);
console.log(
  `${RUNS} concurrent 2-step runs: started in ${ms(started)}, ${JSON.stringify(many)} after ${ms(manyWall)} ` +
    `(${((RUNS * 2) / (manyWall / 1000)).toFixed(0)} steps/s); lost or unfinished: ${lost}`,
);

// 5. Code steps against transform steps (the sandbox pool warmed by a short code run first).
const codeStep = (id: string, dependsOn?: string[]) => ({
  id,
  type: 'code',
  code: 'return 1',
  ...(dependsOn ? { dependsOn } : {}),
});
const chainOf = (mk: (id: string, dependsOn?: string[]) => unknown, n: number) =>
  Array.from({ length: n }, (_, i) => mk(`s${i}`, i ? [`s${i - 1}`] : undefined));
await waitRuns([(await run(await workflow('code-warm', chainOf(codeStep, 3)))).id], 60_000);
// Three runs of each, alternating; per step = a run's span (first start to last completion) / 20, whose
// millisecond timestamps quantise less than single gaps; the median run of each is compared.
const ROUNDS = 3;
const spans = { code: [] as number[], transform: [] as number[] };
const ended = { code: 0, transform: 0 };
const wfIds = {
  code: await workflow('code-20', chainOf(codeStep, 20)),
  transform: await workflow('transform-20', chainOf(noopStep, 20)),
};
for (let i = 0; i < ROUNDS; i++)
  for (const kind of ['transform', 'code'] as const) {
    const id = (await run(wfIds[kind])).id;
    ended[kind] += (await waitRuns([id], 120_000)).completed ?? 0;
    const st = await stepTimes(id);
    spans[kind].push((t(st.at(-1)!.completed_at) - Math.min(...st.map((s) => t(s.started_at)))) / st.length);
  }
const code20 = { p50: p50(spans.code), end: { completed: ended.code === ROUNDS ? 1 : 0 } };
const tf20 = { p50: p50(spans.transform), end: { completed: ended.transform === ROUNDS ? 1 : 0 } };
const codeRatio = code20.p50 / tf20.p50;
const codeOver = code20.p50 - tf20.p50;
console.log(
  `20 code steps vs 20 transform steps (median of ${ROUNDS} runs each): code ${ms(code20.p50)} a step ` +
    `(${spans.code.map((x) => x.toFixed(2)).join(', ')}), transform ${ms(tf20.p50)} a step ` +
    `(${spans.transform.map((x) => x.toFixed(2)).join(', ')}); ratio ${codeRatio.toFixed(2)}x, ` +
    `code overhead ${ms(codeOver)}`,
);

const ok =
  chainEnd.completed === 1 &&
  fanEnd.completed === 1 &&
  lost === 0 &&
  code20.end.completed === 1 &&
  tf20.end.completed === 1;
console.log(
  `targets: per-step p50 ≤ 2x bare job (${(stepP50 / jobP50).toFixed(2)}x) ${stepP50 <= 2 * jobP50 ? 'met' : 'MISSED'}; ` +
    `< 10 ms p50 (${ms(stepP50)}) ${stepP50 < 10 ? 'met' : 'MISSED'}; none lost ${lost === 0 ? 'met' : 'MISSED'}; ` +
    `code ≤ 1.5x transform (${codeRatio.toFixed(2)}x) ${codeRatio <= 1.5 ? 'met' : 'MISSED'}; ` +
    `code overhead < 20 ms (${ms(codeOver)}) ${codeOver < 20 ? 'met' : 'MISSED'}`,
);
console.log(
  `load average ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
await stop();
await deps.db.close();
await bench.drop();
fs.rmSync(dataDir, { recursive: true, force: true });
process.exit(ok ? 0 : 1);

function avg(xs: number[]) {
  return xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
}
