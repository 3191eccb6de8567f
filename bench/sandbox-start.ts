// The added cost of the app sandbox per app start: spawn → first healthy answer of a tiny Node app, plain
// child (baseline) against bubblewrap with cgroups, interleaved, median of 9 each. Run: npm run bench:sandbox
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { detectCgroups } from '../src/areas/hosting/runtime/cgroups.ts';
import { spawnApp, waitHealthy } from '../src/areas/hosting/runtime/local-driver.ts';
import { sandboxProblem } from '../src/areas/hosting/runtime/sandbox.ts';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-bench-sandbox-'));
const rel = path.join(root, 'apps', 'bench', 'releases', 'r1');
fs.mkdirSync(rel, { recursive: true });
fs.writeFileSync(
  path.join(rel, 'server.js'),
  "require('node:http').createServer((q, r) => r.end('ok')).listen(Number(process.env.PORT), '127.0.0.1');",
);
const problem = sandboxProblem(path.join(root, 'check'));
if (problem) throw new Error(problem);
const cgroups = detectCgroups();
const limits = { memoryMb: 512, pids: 128, openFiles: 1024, diskMb: 1024, cpuPercent: 100 };

async function once(sandboxed: boolean): Promise<number> {
  const t0 = performance.now();
  const proc = await spawnApp({
    cwd: rel,
    start: 'node server.js',
    env: {},
    handoff: true,
    onLine: () => {},
    sandbox: sandboxed
      ? { projectId: 'bench', dataDir: path.join(root, 'apps', 'bench', 'data'), limits, cgroups }
      : null,
  });
  const h = await waitHealthy(proc, '/', 15_000);
  const ms = performance.now() - t0;
  await proc.stop(1000);
  if (!h.ok) throw new Error(h.reason);
  return ms;
}

const plain: number[] = [];
const boxed: number[] = [];
await once(false);
await once(true);
for (let i = 0; i < 9; i++) {
  plain.push(await once(false));
  boxed.push(await once(true));
}
const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
console.log(`limits: ${cgroups.kind === 'v1' ? 'cgroup v1' : `none (${cgroups.why})`}`);
console.log(`plain child → healthy: median ${median(plain).toFixed(0)} ms`);
console.log(`sandboxed → healthy:   median ${median(boxed).toFixed(0)} ms`);
console.log(
  `added by the sandbox per start: ${(median(boxed) - median(plain)).toFixed(0)} ms (${(median(boxed) / median(plain)).toFixed(2)}× the plain start)`,
);
fs.rmSync(root, { recursive: true, force: true });
