// Requests/s through Pier's host router to a hello-world app, beside the same app hit directly, in the same
// run. autocannon runs in a child process so it does not share Pier's event loop. Rounds alternate
// (direct, router, …) and the medians are compared.
// Run: npm run bench:router            (the default configuration: connection hand-off, see decision 020)
//      npm run bench:router -- --proxy (APP_CONNECTION_HANDOFF=off: every request proxied by the router)
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { helloArtifact, startPier } from './hosting-setup.ts';

const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const PROXY = process.argv.includes('--proxy');
// Issue 15: hand-off ≥ 0.7 of direct; the proxy path (spliced, decision 081) ≥ 0.5.
const TARGET = PROXY ? 0.5 : 0.7;
const bin = path.resolve('node_modules/.bin/autocannon');

// Asynchronous on purpose: Pier runs in this process and must keep serving while autocannon runs.
async function cannon(
  port: number,
  host?: string,
  socketPath?: string | null,
): Promise<{ rps: number; total: number }> {
  const args = ['-j', '-c', String(CONNECTIONS), '-d', String(DURATION)];
  if (host) args.push('-H', `host=${host}`);
  // A sandboxed app listens in its own network namespace: "direct" is then its Unix socket (decision 066).
  if (socketPath) args.push('-S', socketPath);
  args.push(`http://127.0.0.1:${port}/`);
  const { stdout } = await promisify(execFile)(bin, args, { encoding: 'utf8', maxBuffer: 1 << 24 });
  const out = JSON.parse(stdout);
  if (out.non2xx || out.errors) throw new Error(`errors: ${out.non2xx} non-2xx, ${out.errors} errors`);
  return { rps: out.requests.average as number, total: out.requests.total as number };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const pier = await startPier({ APP_CONNECTION_HANDOFF: PROXY ? 'off' : 'auto' });
try {
  await pier.deploy(await helloArtifact('1'));
  const host = `${pier.project.slug}.apps.bench`;
  console.log(
    `router path: ${pier.deps.config.appConnectionHandoff ? 'connection hand-off (default)' : 'proxy (APP_CONNECTION_HANDOFF=off)'}; load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(
        ' ',
      )}; sandbox ${pier.deps.config.appSandbox ? 'on' : 'off'}; direct via ${pier.appSocket() ? "the app's Unix socket" : 'its TCP port'}`,
  );
  await cannon(pier.appPort(), undefined, pier.appSocket()); // warm-up
  await cannon(pier.port, host);
  const direct: number[] = [];
  const routed: number[] = [];
  // Pier runs in this process: its CPU time over a routed round, per request routed.
  const pierUs: number[] = [];
  const pierSysUs: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    direct.push((await cannon(pier.appPort(), undefined, pier.appSocket())).rps);
    const cpu = process.cpuUsage();
    const r = await cannon(pier.port, host);
    const used = process.cpuUsage(cpu);
    routed.push(r.rps);
    pierUs.push((used.user + used.system) / r.total);
    pierSysUs.push(used.system / r.total);
  }
  const d = median(direct);
  const r = median(routed);
  console.log(`direct : ${direct.map((x) => x.toFixed(0)).join(', ')} req/s (median ${d.toFixed(0)})`);
  console.log(`router : ${routed.map((x) => x.toFixed(0)).join(', ')} req/s (median ${r.toFixed(0)})`);
  console.log(
    `Pier CPU per routed request: ${pierUs.map((x) => x.toFixed(1)).join(', ')} µs (median ${median(pierUs).toFixed(1)}, in the kernel ${median(pierSysUs).toFixed(1)})`,
  );
  console.log(
    `ratio router/direct: ${(r / d).toFixed(2)} (target ≥ ${TARGET.toFixed(2)}: ${r / d >= TARGET ? 'met' : 'MISSED'}); load average after ${os.loadavg()[0]!.toFixed(1)}`,
  );
} finally {
  await pier.stop();
}
