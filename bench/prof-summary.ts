// Summarises a V8 CPU profile (`node --cpu-prof`, or BENCH_PROF=1 of bench/fn-api.ts): the functions with
// the most self time, and the most total (inclusive) time, as a share of the sampled non-idle time.
//
//   node bench/prof-summary.ts /tmp/pierprof/CPU.….cpuprofile [--top 40] [--since-ms 0]
//
// `--since-ms N` skips samples taken in the first N ms (start-up, migrations, seeding), so what remains is
// the request path under load.
import fs from 'node:fs';
import { arg, type CallFrame, label } from './profile-kit.ts';

type Node = {
  id: number;
  callFrame: CallFrame;
  children?: number[];
};
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number };

const file = process.argv[2];
if (!file) {
  console.error('usage: node bench/prof-summary.ts <file.cpuprofile> [--top N] [--since-ms N]');
  process.exit(2);
}
const top = arg('--top', 40);
const sinceMs = arg('--since-ms', 0);
const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;

const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const IDLE = new Set(['(idle)', '(program)', '(garbage collector)']);
const self = new Map<string, number>();
const total = new Map<string, number>();
let busy = 0;
let gc = 0;
let t = 0;
for (let i = 0; i < prof.samples.length; i++) {
  t += prof.timeDeltas[i] ?? 0;
  if (t / 1000 < sinceMs) continue;
  const n = byId.get(prof.samples[i]!)!;
  const name = n.callFrame.functionName;
  if (name === '(garbage collector)') gc++;
  if (name === '(idle)' || name === '(program)') continue;
  busy++;
  const l = label(n);
  self.set(l, (self.get(l) ?? 0) + 1);
  const seen = new Set<string>();
  for (let id: number | undefined = n.id; id !== undefined; id = parent.get(id)) {
    const node = byId.get(id)!;
    if (IDLE.has(node.callFrame.functionName) || node.callFrame.functionName === '(root)') continue;
    const key = label(node);
    if (seen.has(key)) continue;
    seen.add(key);
    total.set(key, (total.get(key) ?? 0) + 1);
  }
}

function print(title: string, m: Map<string, number>): void {
  console.log(`\n${title}`);
  const rows = [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [k, v] of rows) console.log(`${((100 * v) / busy).toFixed(1).padStart(5)} %  ${k}`);
}

console.log(`${busy} busy samples (${((100 * gc) / Math.max(1, busy)).toFixed(1)} % in GC)`);
print('self time', self);
print('total time', total);
