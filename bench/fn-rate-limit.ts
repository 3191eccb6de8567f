// Load test (bounded, loopback): the function API's rate limits under a flood, and normal answers after.
//
//   npm run bench:fn-rate-limit
//   BENCH_DURATION=5 BENCH_CONNECTIONS=10 BENCH_PER_SEC=50 BENCH_BURST=100   tune the flood and the limit
//
// Pier runs on PGlite in a child process (this file with `--serve`) with FN_RATE_LIMIT_PER_SEC/_BURST set
// from the environment above. Four phases against POST /api/fn/getProjectForCli:
//   1. flood one personal token for BENCH_DURATION s: about burst + perSec × duration 200s, the rest 429;
//   2. one call in the middle of the flood: 429 RATE_LIMITED with Retry-After and the RateLimit headers;
//   3. after the bucket refilled, calls paced at the sustained rate for 3 s: all 200;
//   4. flood without a credential from one address: 401 within the per-address budget
//      (FN_RATE_LIMIT_IP_*), 429 past it.
// Exits 1 when a phase does not show what it should.

import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { startBenchPier } from './bench-pier.ts';

const require = createRequire(import.meta.url);
type AutocannonResult = {
  requests: { average: number; total: number };
  statusCodeStats: Record<string, { count: number }>;
  errors: number;
};
const autocannon = require('autocannon') as (opts: Record<string, unknown>) => Promise<AutocannonResult>;

const self = fileURLToPath(import.meta.url);
const perSec = Number(process.env.BENCH_PER_SEC ?? 50);
const burst = Number(process.env.BENCH_BURST ?? 100);
const ipPerSec = 10;
const ipBurst = 50;
const duration = Number(process.env.BENCH_DURATION ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);

type Served = { base: string; token: string };

async function serve(): Promise<void> {
  const { app, token, close } = await startBenchPier({
    prefix: 'pier-bench-rl-',
    env: {
      LOG_LEVEL: 'warn',
      FN_RATE_LIMIT_PER_SEC: String(perSec),
      FN_RATE_LIMIT_BURST: String(burst),
      FN_RATE_LIMIT_IP_PER_SEC: String(ipPerSec),
      FN_RATE_LIMIT_IP_BURST: String(ipBurst),
    },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  const served: Served = { base: `http://127.0.0.1:${port}`, token };
  process.stdout.write(`${JSON.stringify(served)}\n`);
  process.on('SIGTERM', async () => {
    await close();
    process.exit(0);
  });
}

async function startChild(): Promise<{ child: ChildProcess } & Served> {
  const child = spawn(process.execPath, [self, '--serve'], { stdio: ['ignore', 'pipe', 'inherit'] });
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const count = (r: AutocannonResult, status: number) => r.statusCodeStats[String(status)]?.count ?? 0;
const others = (r: AutocannonResult, ...known: number[]) =>
  Object.entries(r.statusCodeStats)
    .filter(([s]) => !known.includes(Number(s)))
    .reduce((n, [, v]) => n + v.count, 0) + r.errors;

async function main(): Promise<void> {
  const { child, base, token } = await startChild();
  const fn = (name: string) => `${base}/api/fn/${name}`;
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
  const body = JSON.stringify({ slug: 'bench-app' });
  const failures: string[] = [];
  const rows: string[] = [];
  try {
    // 1. The flood, and 2. one call in its middle (after it the bucket refills while autocannon stops).
    const flooding = autocannon({
      url: fn('getProjectForCli'),
      method: 'POST',
      body,
      headers,
      connections,
      duration,
    });
    await sleep((duration * 1000) / 2);
    // A call may win the token that just refilled: the first refusal of up to five tells.
    let after = await fetch(fn('getProjectForCli'), { method: 'POST', body, headers });
    for (let i = 1; i < 5 && after.status !== 429; i++)
      after = await fetch(fn('getProjectForCli'), { method: 'POST', body, headers });
    const flood = await flooding;
    const ok = count(flood, 200);
    const limited = count(flood, 429);
    const expected = burst + perSec * duration;
    rows.push(
      `| flood, one token, ${connections} connections, ${duration} s | ${flood.requests.total} | ${ok} | ${limited} | ${others(flood, 200, 429)} | ≈ ${expected} allowed (burst + perSec × s) |`,
    );
    if (!limited) failures.push('the flood saw no 429');
    // The window closes a little after `duration`; allow one second of refill beyond it.
    if (ok > expected + perSec) failures.push(`the flood got ${ok} 200s, more than ${expected + perSec}`);

    const retryAfter = after.headers.get('retry-after');
    rows.push(
      `| a call in the middle of the flood (first refusal of ≤ 5) | 1 | ${after.status === 200 ? 1 : 0} | ${after.status === 429 ? 1 : 0} | 0 | Retry-After: ${retryAfter}; RateLimit: ${after.headers.get('ratelimit')}; RateLimit-Policy: ${after.headers.get('ratelimit-policy')} |`,
    );
    const error =
      after.status === 429 ? ((await after.json()) as { error: { code: string } }).error.code : '';
    if (after.status !== 429 || error !== 'RATE_LIMITED' || !retryAfter)
      failures.push(`the call after the flood answered ${after.status} ${error} (Retry-After ${retryAfter})`);

    // 3. Refilled, then paced at the sustained rate: every call answers.
    await sleep(Math.ceil(burst / perSec) * 1000 + 500);
    const paced = await autocannon({
      url: fn('getProjectForCli'),
      method: 'POST',
      body,
      headers,
      connections: 1,
      overallRate: perSec,
      duration: 3,
    });
    rows.push(
      `| after the refill, paced at ${perSec}/s for 3 s | ${paced.requests.total} | ${count(paced, 200)} | ${count(paced, 429)} | ${others(paced, 200, 429)} | all 200 |`,
    );
    if (count(paced, 200) !== paced.requests.total || !paced.requests.total)
      failures.push('a paced call after the refill did not answer 200');

    // 4. Calls without a credential from one address (the 401 of a missing token; the public
    // exchangeCliAuthCode would mix in its own 429 for failed codes).
    const anon = await autocannon({
      url: fn('getProjectForCli'),
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
      connections,
      duration: 2,
    });
    const answered = count(anon, 401);
    const anonLimited = count(anon, 429);
    const anonExpected = ipBurst + ipPerSec * 2;
    rows.push(
      `| no credential, one address, 10 connections, 2 s | ${anon.requests.total} | ${answered} (401) | ${anonLimited} | ${others(anon, 401, 429)} | ≈ ${anonExpected} answered (per address: burst ${ipBurst}, ${ipPerSec}/s) |`,
    );
    if (!anonLimited) failures.push('calls without a credential saw no 429');
    if (answered > anonExpected + ipPerSec)
      failures.push(`${answered} calls without a credential answered, more than ${anonExpected + ipPerSec}`);
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }

  console.log(
    `fn-rate-limit: per credential ${perSec}/s burst ${burst}; per address ${ipPerSec}/s burst ${ipBurst}; ${os.cpus().length} CPUs, Node ${process.version}\n`,
  );
  console.log('| phase | requests | not refused | 429 | errors / other | expected |');
  console.log('|---|---:|---:|---:|---:|---|');
  for (const r of rows) console.log(r);
  if (failures.length) {
    console.log(`\nFAILED: ${failures.join('; ')}`);
    process.exit(1);
  }
  console.log('\nok: 429 with Retry-After past the limit, 200 after the refill');
}

if (process.argv[2] === '--serve') await serve();
else await main();
