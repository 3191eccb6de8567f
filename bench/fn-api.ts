// Benchmark: getProjectForCli with a personal token under concurrent load, beside a bare Fastify route
// returning the same JSON, measured in the same run with the same autocannon settings.
//
//   npm run bench:fn-api                       PGlite, and PostgreSQL when BENCH_DATABASE_URL (or the
//                                              local postgres://postgres@127.0.0.1:5432/postgres) answers
//   BENCH_DURATION=5 BENCH_ROUNDS=3 BENCH_CONNECTIONS=10   tune the load
//
// Each server runs in its own child process (this file with `--serve`), so the load generator does not
// share an event loop with the server it measures.

import { type ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import inspector from 'node:inspector/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import pg from 'pg';
import pino from 'pino';
import { startBenchPier } from './bench-pier.ts';

const require = createRequire(import.meta.url);
type AutocannonResult = {
  requests: { average: number; total: number };
  latency: { p99: number; average: number };
  non2xx: number;
  errors: number;
};
const autocannon = require('autocannon') as (opts: Record<string, unknown>) => Promise<AutocannonResult>;

const self = fileURLToPath(import.meta.url);
const DEFAULT_PG = 'postgres://postgres@127.0.0.1:5432/postgres';

type Target = { url: string; body: string; headers: Record<string, string> };

// ---------------------------------------------------------------------------------------------------
// Server side (child process)

/** The server's own CPU time (user + system, µs): cost per request, robust to a busy shared machine. */
function cpuMicros(): { cpu: number } {
  const u = process.cpuUsage();
  return { cpu: u.user + u.system };
}

async function servePier(databaseUrl: string | undefined): Promise<void> {
  const { createLogger } = await import('../src/create-deps.ts');
  const { logDestination } = await import('../src/core/log-destination.ts');
  const { ensureUser } = await import('../src/areas/identity/users.ts');
  const { createOrg } = await import('../src/areas/orgs/orgs.ts');
  const { createProject } = await import('../src/areas/orgs/projects.ts');
  const { app, deps, token, close } = await startBenchPier({
    prefix: 'pier-bench-',
    env: {
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
      // The throughput measured, not the limit: the bucket is still taken on every call (its cost counts).
      FN_RATE_LIMIT_PER_SEC: '100000',
      FN_RATE_LIMIT_BURST: '1000000',
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    },
    // Production logging (info: a line per request, through the same buffered destination as `pier serve`)
    // into /dev/null, so its cost is measured, not its output. BENCH_LOG_SYNC=1: a synchronous write per line
    // instead (what this bench measured before 2026-11-26).
    log: (config) =>
      createLogger(
        config,
        process.env.BENCH_LOG_SYNC
          ? pino.destination({ dest: '/dev/null', sync: true })
          : logDestination('/dev/null'),
      ),
  });
  // A few neighbours so the lookup is not against a one-row table.
  for (let i = 0; i < 20; i++) {
    const { user: u } = await ensureUser(deps, `n${i}@example.com`);
    const o = await createOrg(deps, { slug: `bench-n${i}`, name: 'N', ownerUserId: u.id });
    for (let j = 0; j < 5; j++) await createProject(deps, o, { slug: `bench-n${i}-p${j}`, name: 'P' });
  }
  app.get('/__bench/cpu', async () => cpuMicros());
  if (process.env.BENCH_PROF) profileRoutes(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  const target: Target = {
    url: `http://127.0.0.1:${port}/api/fn/getProjectForCli`,
    body: JSON.stringify({ slug: 'bench-app' }),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
  };
  const sample = await fetch(target.url, { method: 'POST', body: target.body, headers: target.headers });
  process.stdout.write(`${JSON.stringify({ target, sample: await sample.json() })}\n`);
  process.on('SIGTERM', async () => {
    await close();
    process.exit(0);
  });
}

// BENCH_PROF=1: a CPU profile of the measured rounds only (not start-up, migrations, seeding or warm-up),
// written to /tmp/pierprof; summarise it with bench/prof-summary.ts. BENCH_PROF=heap: a sampling heap
// profile of the same rounds instead, counting every allocation (also those the GC has since collected),
// so it shows what the request path allocates; summarise it with bench/heap-summary.ts.
function profileRoutes(app: import('fastify').FastifyInstance): void {
  const session = new inspector.Session();
  session.connect();
  const heap = process.env.BENCH_PROF === 'heap';
  app.get('/__bench/prof/start', async () => {
    if (heap) {
      await session.post('HeapProfiler.enable');
      await session.post('HeapProfiler.startSampling', {
        samplingInterval: 1024,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
      return { ok: true };
    }
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 200 });
    await session.post('Profiler.start');
    return { ok: true };
  });
  app.get('/__bench/prof/stop', async () => {
    const { profile } = heap
      ? await session.post('HeapProfiler.stopSampling')
      : await session.post('Profiler.stop');
    fs.mkdirSync('/tmp/pierprof', { recursive: true });
    const file = `/tmp/pierprof/fn-api-${process.pid}-${Date.now()}.${heap ? 'heapprofile' : 'cpuprofile'}`;
    fs.writeFileSync(file, JSON.stringify(profile));
    return { file };
  });
}

async function serveBare(sampleJson: string): Promise<void> {
  const sample = JSON.parse(sampleJson);
  const app = Fastify({ logger: false });
  app.post('/api/fn/getProjectForCli', async () => sample);
  app.get('/__bench/cpu', async () => cpuMicros());
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  const target: Target = {
    url: `http://127.0.0.1:${port}/api/fn/getProjectForCli`,
    body: JSON.stringify({ slug: 'bench-app' }),
    headers: { 'content-type': 'application/json' },
  };
  process.stdout.write(`${JSON.stringify({ target, sample })}\n`);
  process.on('SIGTERM', async () => {
    await app.close();
    process.exit(0);
  });
}

// ---------------------------------------------------------------------------------------------------
// Load side (parent process)

async function startChild(args: string[]): Promise<{ child: ChildProcess; target: Target; sample: unknown }> {
  // BENCH_PIER_NODE_ARGS: Node/V8 flags for the Pier child only (e.g. `--min-semi-space-size=16`).
  const flags =
    args[0] === 'pier' ? (process.env.BENCH_PIER_NODE_ARGS?.split(' ').filter(Boolean) ?? []) : [];
  const child = spawn(process.execPath, [...flags, self, '--serve', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let buf = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl >= 0) resolve({ child, ...JSON.parse(buf.slice(0, nl)) });
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

const duration = Number(process.env.BENCH_DURATION ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);

async function load(t: Target, seconds = duration): Promise<AutocannonResult> {
  return autocannon({
    url: t.url,
    method: 'POST',
    body: t.body,
    headers: t.headers,
    connections,
    duration: seconds,
  });
}

type Row = { name: string; rps: number; p99: number; non2xx: number; cpuPerReq: number };

async function serverCpu(t: Target): Promise<number> {
  const res = await fetch(t.url.replace('/api/fn/getProjectForCli', '/__bench/cpu'));
  return ((await res.json()) as { cpu: number }).cpu;
}

async function measure(name: string, t: Target): Promise<Row> {
  const before = await serverCpu(t);
  const r = await load(t);
  const cpu = (await serverCpu(t)) - before;
  return {
    name,
    rps: r.requests.average,
    p99: r.latency.p99,
    non2xx: r.non2xx + r.errors,
    cpuPerReq: cpu / Math.max(1, r.requests.total),
  };
}

async function scratchPostgres(): Promise<{ url: string; drop: () => Promise<void> } | null> {
  const admin = process.env.BENCH_DATABASE_URL ?? DEFAULT_PG;
  const c = new pg.Client({ connectionString: admin, connectionTimeoutMillis: 2000 });
  try {
    await c.connect();
  } catch {
    return null;
  }
  const name = `pier_bench_${crypto.randomBytes(4).toString('hex')}`;
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const d = new pg.Client({ connectionString: admin });
      await d.connect();
      await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await d.end();
    },
  };
}

// The machine is shared, so load drifts: the two targets alternate in rounds and each figure is the mean
// over its rounds (p99: the worst round), which keeps the ratio honest under drift.
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);

function combine(name: string, rows: Row[]): Row {
  return {
    name,
    rps: rows.reduce((a, r) => a + r.rps, 0) / rows.length,
    p99: Math.max(...rows.map((r) => r.p99)),
    non2xx: rows.reduce((a, r) => a + r.non2xx, 0),
    cpuPerReq: rows.reduce((a, r) => a + r.cpuPerReq, 0) / rows.length,
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Per-round ratios (each round's Pier against the bare round just before it) and their medians. */
type Rounds = { rps: number[]; cpu: number[]; load: [number, number] };

async function runPair(label: string, dbArgs: string[]): Promise<{ pier: Row; bare: Row; rounds: Rounds }> {
  const pier = await startChild(['pier', ...dbArgs]);
  const bare = await startChild(['bare', JSON.stringify(pier.sample)]);
  try {
    await load(bare.target, 2); // warm-up: JIT, caches, connection pools
    await load(pier.target, 2);
    const bareRows: Row[] = [];
    const pierRows: Row[] = [];
    const prof = (what: string) =>
      fetch(pier.target.url.replace('/api/fn/getProjectForCli', `/__bench/prof/${what}`));
    if (process.env.BENCH_PROF) await prof('start');
    const loadBefore = os.loadavg()[0]!;
    for (let i = 0; i < rounds; i++) {
      bareRows.push(await measure('bare', bare.target));
      pierRows.push(await measure('pier', pier.target));
    }
    if (process.env.BENCH_PROF)
      console.log(
        `CPU profile (${label}): ${((await (await prof('stop')).json()) as { file: string }).file}`,
      );
    return {
      pier: combine(`Pier getProjectForCli on ${label}`, pierRows),
      bare: combine(`bare Fastify (${label} run)`, bareRows),
      rounds: {
        rps: pierRows.map((p, i) => p.rps / bareRows[i]!.rps),
        cpu: pierRows.map((p, i) => bareRows[i]!.cpuPerReq / p.cpuPerReq),
        load: [loadBefore, os.loadavg()[0]!],
      },
    };
  } finally {
    await stopChild(pier.child);
    await stopChild(bare.child);
  }
}

async function main(): Promise<void> {
  const [flag, role, arg] = process.argv.slice(2);
  if (flag === '--serve') {
    if (role === 'pier') return servePier(arg);
    return serveBare(arg!);
  }
  console.log(
    `fn-api bench: ${connections} connections, ${rounds} alternating rounds of ${duration} s per target ` +
      `(after 2 s warm-up each), ` +
      `${os.cpus().length} CPUs, Node ${process.version}`,
  );
  const results: { label: string; pier: Row; bare: Row; rounds: Rounds }[] = [];
  results.push({ label: 'PGlite', ...(await runPair('PGlite', [])) });
  const pgdb = process.env.BENCH_SKIP_PG ? null : await scratchPostgres();
  if (pgdb) {
    try {
      results.push({ label: 'PostgreSQL', ...(await runPair('PostgreSQL', [pgdb.url])) });
    } finally {
      await pgdb.drop();
    }
  } else {
    console.log('PostgreSQL not reachable; skipped (set BENCH_DATABASE_URL).');
  }
  console.log(
    '\n| database | target | req/s | p99 ms | non-2xx | server CPU µs/req | ratio (req/s) | ratio (CPU) |',
  );
  console.log('|---|---|---:|---:|---:|---:|---:|---:|');
  let ok = true;
  for (const r of results) {
    const ratio = r.pier.rps / r.bare.rps;
    const cpuRatio = r.bare.cpuPerReq / r.pier.cpuPerReq;
    if (ratio < 0.5) ok = false;
    const line = (row: Row, rr: string, cr: string) =>
      console.log(
        `| ${r.label} | ${row.name} | ${row.rps.toFixed(0)} | ${row.p99} | ${row.non2xx} | ` +
          `${row.cpuPerReq.toFixed(0)} | ${rr} | ${cr} |`,
      );
    line(r.bare, '1.00', '1.00');
    line(r.pier, ratio.toFixed(2), cpuRatio.toFixed(2));
  }
  // On a shared machine single rounds swing with the load; the median of the per-round ratios is the
  // steadier reading.
  console.log('');
  for (const r of results) {
    const f = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(' ');
    console.log(
      `${r.label}: per-round req/s ratio ${f(r.rounds.rps)} → median ${median(r.rounds.rps).toFixed(2)}; ` +
        `CPU ratio ${f(r.rounds.cpu)} → median ${median(r.rounds.cpu).toFixed(2)}; ` +
        `load average ${r.rounds.load[0].toFixed(1)} → ${r.rounds.load[1].toFixed(1)}`,
    );
  }
  console.log(ok ? '\nratio ≥ 0.5 on every database' : '\nratio below 0.5 on some database');
  process.exitCode = ok ? 0 : 1;
}

await main();
