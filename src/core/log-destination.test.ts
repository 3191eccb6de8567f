import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The buffered process log (what `pier serve` writes to stdout) loses no access line however the process
// ends short of a hard kill, and a quiet process still shows its lines within a moment.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const script = `
import pino from 'pino';
import { logDestination } from './src/core/log-destination.ts';
import { accessLogger } from './src/http/access-log.ts';
const [n, mode] = [Number(process.argv[1]), process.argv[2]];
const access = accessLogger(pino({ level: 'info' }, logDestination()));
for (let i = 0; i < n; i++) access('r' + i, 'POST', '/api/fn/getProjectForCli', 200, 0.5);
if (mode === 'exit') process.exit(0);
if (mode === 'throw') throw new Error('boom');
if (mode === 'sigterm' || mode === 'idle') {
  process.on('SIGTERM', () => process.exit(0));
  setInterval(() => {}, 1000);
  process.stderr.write('ready\\n');
}
`;

type Run = { lines: () => string[]; code: Promise<number | null>; kill: (s: NodeJS.Signals) => void };

function run(n: number, mode: string): Promise<Run> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, String(n), mode], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  const code = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  const run: Run = { lines: () => out.split('\n').filter(Boolean), code, kill: (s) => child.kill(s) };
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
      if (err.includes('ready\n')) resolve(run);
    });
    child.once('exit', () => resolve(run));
    child.once('error', reject);
  });
}

function expectAll(lines: string[], n: number): void {
  expect(lines).toHaveLength(n);
  lines.forEach((l, i) => {
    expect(JSON.parse(l)).toMatchObject({ reqId: `r${i}`, status: 200, msg: 'request' });
  });
}

// 1000 lines: several full buffers and a partial one still in memory when the process ends (1001 would
// happen to fill the last buffer exactly).
describe('the buffered process log', () => {
  it.each(['exit', 'end', 'throw'])('keeps every line when the process ends (%s)', async (mode) => {
    const r = await run(1000, mode);
    await r.code;
    expectAll(r.lines(), 1000);
  });

  it('keeps every line on SIGTERM', async () => {
    const r = await run(1000, 'sigterm');
    r.kill('SIGTERM');
    expect(await r.code).toBe(0);
    expectAll(r.lines(), 1000);
  });

  it('writes a few lines within a moment while the process stays idle', async () => {
    const r = await run(3, 'idle');
    const deadline = Date.now() + 5_000;
    while (r.lines().length < 3 && Date.now() < deadline) await new Promise((s) => setTimeout(s, 20));
    expectAll(r.lines(), 3);
    r.kill('SIGKILL');
    await r.code;
  });
});
