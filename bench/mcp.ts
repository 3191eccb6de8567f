// Benchmark: an MCP tool call (POST /mcp, tools/call getProjectForCli, stateless) against the same function
// called directly over HTTP (POST /api/fn/getProjectForCli), on one Pier, in one run, alternating rounds.
// Target: the tool call at ≥ 0.7× the direct call's throughput.
//
//   npm run bench:mcp                                  PGlite
//   BENCH_DURATION=5 BENCH_ROUNDS=3 BENCH_CONNECTIONS=10   tune the load
//
// Pier runs in a child process (this file with `--serve`), so the load generator does not share its event
// loop. Besides req/s, the server's CPU time per request is compared (robust to a busy shared machine).

import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
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

type Target = { url: string; body: string; headers: Record<string, string> };
type Targets = { direct: Target; mcp: Target; cpuUrl: string };

async function serve(): Promise<void> {
  const { createLogger } = await import('../src/create-deps.ts');
  const { logDestination } = await import('../src/core/log-destination.ts');
  const { app, token, close } = await startBenchPier({
    prefix: 'pier-bench-mcp-',
    // The throughput measured, not the function API's limit (its cost per call stays in the figures).
    env: { FN_RATE_LIMIT_PER_SEC: '100000', FN_RATE_LIMIT_BURST: '1000000' },
    log: (config) => createLogger(config, logDestination('/dev/null')),
  });
  app.get('/__bench/cpu', async () => {
    const u = process.cpuUsage();
    return { cpu: u.user + u.system };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const targets: Targets = {
    direct: {
      url: `${base}/api/fn/getProjectForCli`,
      body: JSON.stringify({ slug: 'bench-app' }),
      headers: auth,
    },
    mcp: {
      url: `${base}/mcp`,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'getProjectForCli', arguments: { slug: 'bench-app' } },
      }),
      headers: {
        ...auth,
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
    },
    cpuUrl: `${base}/__bench/cpu`,
  };
  // Both answer the same project, or the comparison means nothing.
  const direct = await (await fetch(targets.direct.url, { method: 'POST', ...targets.direct })).json();
  const viaMcp = await (await fetch(targets.mcp.url, { method: 'POST', ...targets.mcp })).json();
  if (JSON.stringify(viaMcp.result?.structuredContent) !== JSON.stringify(direct)) {
    throw new Error(`MCP answer differs: ${JSON.stringify(viaMcp)} vs ${JSON.stringify(direct)}`);
  }
  process.stdout.write(`${JSON.stringify(targets)}\n`);
  process.on('SIGTERM', async () => {
    await close();
    process.exit(0);
  });
}

const duration = Number(process.env.BENCH_DURATION ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);

async function cpu(url: string): Promise<number> {
  return ((await (await fetch(url)).json()) as { cpu: number }).cpu;
}

async function round(t: Target, cpuUrl: string, seconds = duration) {
  const before = await cpu(cpuUrl);
  const r = await autocannon({
    url: t.url,
    method: 'POST',
    body: t.body,
    headers: t.headers,
    connections,
    duration: seconds,
  });
  const used = (await cpu(cpuUrl)) - before;
  if (r.non2xx || r.errors) throw new Error(`${t.url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, p99: r.latency.p99, cpuPerReq: used / Math.max(1, r.requests.total) };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

async function main(): Promise<void> {
  const child: ChildProcess = spawn(process.execPath, [self, '--serve'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const targets = await new Promise<Targets>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl >= 0) resolve(JSON.parse(buf.slice(0, nl)));
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  try {
    const load = [os.loadavg()[0]!];
    console.log(`mcp bench: ${connections} connections, ${rounds} alternating rounds of ${duration} s each`);
    await round(targets.direct, targets.cpuUrl, 2); // warm-up
    await round(targets.mcp, targets.cpuUrl, 2);
    const rows: { direct: Awaited<ReturnType<typeof round>>; mcp: Awaited<ReturnType<typeof round>> }[] = [];
    for (let i = 0; i < rounds; i++) {
      const direct = await round(targets.direct, targets.cpuUrl);
      const mcp = await round(targets.mcp, targets.cpuUrl);
      rows.push({ direct, mcp });
      console.log(
        `round ${i + 1}: direct ${direct.rps.toFixed(0)} req/s (p99 ${direct.p99} ms, ${direct.cpuPerReq.toFixed(0)} µs CPU/req), ` +
          `mcp ${mcp.rps.toFixed(0)} req/s (p99 ${mcp.p99} ms, ${mcp.cpuPerReq.toFixed(0)} µs CPU/req), ` +
          `ratio ${(mcp.rps / direct.rps).toFixed(2)}`,
      );
    }
    load.push(os.loadavg()[0]!);
    const rps = median(rows.map((r) => r.mcp.rps / r.direct.rps));
    const cpuRatio = median(rows.map((r) => r.direct.cpuPerReq / r.mcp.cpuPerReq));
    console.log(
      `median throughput ratio mcp/direct ${rps.toFixed(2)} (target ≥ 0.70); ` +
        `CPU-per-request ratio direct/mcp ${cpuRatio.toFixed(2)}; load average ${load[0]!.toFixed(1)} → ${load[1]!.toFixed(1)}`,
    );
  } finally {
    child.kill('SIGTERM');
  }
}

if (process.argv.includes('--serve')) await serve();
else await main();
