// How long `pier serve` takes to be ready (`npm run bench:startup`, issue 39): a first start on an empty data
// folder and a restart on the same one, each as a fresh process until "Pier is running", with the per-step
// lines Pier prints. Baselines in the same run: a bare process that opens PGlite and listens with Fastify
// (what every start pays at least), on an empty folder (against the first start) and again on the folder it
// made (against the restart), so a figure reads as a ratio on a busy machine.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const NODE = process.execPath;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const BASELINE = `
import fs from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import Fastify from 'fastify';
const db = await PGlite.create(process.env.DIR);
await db.query('select 1');
const app = Fastify();
app.get('/healthz', async () => ({ ok: true }));
await app.listen({ port: 0, host: '127.0.0.1' });
console.log('Pier is running (baseline)');
`;

/** Spawns a process and resolves with ms until its stdout shows the ready line, then kills it. */
function timeToReady(args: string[], env: NodeJS.ProcessEnv): Promise<{ ms: number; out: string }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(NODE, args, { cwd: ROOT, env: { ...process.env, ...env } });
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`not ready in 120 s:\n${out}`));
    }, 120_000);
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('Pier is running')) {
        const ms = performance.now() - t0;
        clearTimeout(timer);
        child.once('exit', () => resolve({ ms, out }));
        child.kill('SIGTERM');
      }
    });
    child.stderr.on('data', (d) => (out += d));
  });
}

const steps = (out: string) =>
  out
    .split('\n')
    .filter((l) => /^ {2}\w+ {2,}.*\(\d/.test(l))
    .map((l) => l.trim().replace(/\s+/g, ' '));

const firsts: number[] = [];
const restarts: number[] = [];
const bases: number[] = [];
const reopens: number[] = [];
let lastFirst = '';
let lastRestart = '';
for (let i = 0; i < ROUNDS; i++) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-startup-'));
  const env = { DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'warn', APP_SANDBOX: 'off' };
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-startup-base-'));
  bases.push((await timeToReady(['--input-type=module', '-e', BASELINE], { DIR: base })).ms);
  reopens.push((await timeToReady(['--input-type=module', '-e', BASELINE], { DIR: base })).ms);
  const first = await timeToReady(['src/main.ts', 'serve'], env);
  firsts.push(first.ms);
  lastFirst = first.out;
  const again = await timeToReady(['src/main.ts', 'serve'], env);
  restarts.push(again.ms);
  lastRestart = again.out;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(base, { recursive: true, force: true });
}

const b = median(bases);
const r = median(reopens);
console.log(
  `rounds: ${ROUNDS}; load average at the end: ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores`,
);
console.log(`baseline, bare PGlite + Fastify on an empty folder: median ${(b / 1000).toFixed(2)} s`);
console.log(`baseline, the same on its existing folder:      median ${(r / 1000).toFixed(2)} s`);
console.log(
  `first start (empty DATA_DIR): median ${(median(firsts) / 1000).toFixed(2)} s = ${(median(firsts) / b).toFixed(1)}× baseline`,
);
console.log(
  `restart (existing DATA_DIR):  median ${(median(restarts) / 1000).toFixed(2)} s = ${(median(restarts) / r).toFixed(1)}× baseline`,
);
console.log(`steps of the last first start: ${steps(lastFirst).join(' · ')}`);
console.log(`steps of the last restart:     ${steps(lastRestart).join(' · ')}`);
