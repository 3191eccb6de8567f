// Summarises a sampling heap profile (BENCH_PROF=heap of bench/fn-api.ts, or `node --heap-prof`): bytes
// allocated per function (self) and under it (inclusive), as a share of everything sampled, and per request
// when the number of requests is given.
//
//   node bench/heap-summary.ts /tmp/pierprof/….heapprofile [--top 40] [--requests N]
import fs from 'node:fs';
import { arg, type CallFrame, label } from './profile-kit.ts';

type Node = {
  callFrame: CallFrame;
  selfSize: number;
  children: Node[];
};

const file = process.argv[2];
if (!file) {
  console.error('usage: node bench/heap-summary.ts <file.heapprofile> [--top N] [--requests N]');
  process.exit(2);
}
const top = arg('--top', 40);
const requests = arg('--requests', 0);
const { head } = JSON.parse(fs.readFileSync(file, 'utf8')) as { head: Node };

const self = new Map<string, number>();
const total = new Map<string, number>();
let all = 0;
function walk(n: Node, stack: Set<string>): number {
  const l = label(n);
  self.set(l, (self.get(l) ?? 0) + n.selfSize);
  let sum = n.selfSize;
  const fresh = !stack.has(l);
  if (fresh) stack.add(l);
  for (const c of n.children) sum += walk(c, stack);
  if (fresh) {
    stack.delete(l);
    total.set(l, (total.get(l) ?? 0) + sum);
  }
  return sum;
}
all = walk(head, new Set());

function print(title: string, m: Map<string, number>): void {
  console.log(`\n${title}`);
  const rows = [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [k, v] of rows) {
    const per = requests ? `${(v / requests).toFixed(0).padStart(6)} B/req  ` : '';
    console.log(`${((100 * v) / all).toFixed(1).padStart(5)} %  ${per}${k}`);
  }
}

console.log(
  `${(all / 1048576).toFixed(1)} MB sampled${requests ? `, ${(all / requests).toFixed(0)} B per request` : ''}`,
);
print('self', self);
print('inclusive', total);
