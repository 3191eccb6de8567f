import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';

// The job queue is pg-boss, used through its public API from src/core/jobs.ts alone (decision 041). Code
// that names pg-boss's tables (`pgboss.job`, `pgboss.archive`, …) would break silently when a pg-boss
// upgrade changes them, so no source file outside the queue module may. Tests may read the queue's rows to
// check what happened: an upgrade breaks those loudly.

const QUEUE_MODULE = 'src/core/jobs.ts';
const ROOTS = ['src', 'bench', 'scripts'];

function sources(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : sources(p);
    return /\.(ts|js|mjs|sql)$/.test(e.name) && !/\.test\.ts$/.test(e.name) ? [p] : [];
  });
}

it('no source outside the queue module names pg-boss tables', () => {
  const offenders = ROOTS.flatMap(sources)
    .filter((f) => f !== QUEUE_MODULE)
    .flatMap((f) =>
      fs
        .readFileSync(f, 'utf8')
        .split('\n')
        .flatMap((line, i) => (/\bpgboss\./i.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])),
    );
  expect(offenders).toEqual([]);
});

it('the queue module itself names no pg-boss table either (public API only)', () => {
  const text = fs.readFileSync(QUEUE_MODULE, 'utf8');
  expect(text.match(/\bpgboss\.\w+/gi) ?? []).toEqual([]);
});
