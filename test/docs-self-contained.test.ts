import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// A clone of the project is all a user has: every relative path the README and docs/ name (`../x/y`) must
// lead to something inside the clone, not to a folder beside the repository that only a workspace had.

// Code shown in the docs (`import … from '../orgs/index.ts'`, `declare module '../../deps.ts'`) names paths
// relative to a source file, not to the doc.
const IMPORT_SPECIFIER = /(?:from|declare module) '[^']*'/g;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function markdown(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory()
        ? markdown(path.join(dir, e.name))
        : e.name.endsWith('.md')
          ? [path.join(dir, e.name)]
          : [],
    );
}

describe('documentation', () => {
  it('never points outside the repository', () => {
    const files = [path.join(root, 'README.md'), ...markdown(path.join(root, 'docs'))];
    const outside = files.flatMap((f) =>
      fs
        .readFileSync(f, 'utf8')
        .split('\n')
        .map((line, i) => ({ line, at: `${path.relative(root, f)}:${i + 1}` }))
        .flatMap(({ line, at }) =>
          [...line.replace(IMPORT_SPECIFIER, '').matchAll(/(?:\.\.\/)+[\w.-]+/g)].map((m) => ({
            at,
            target: path.resolve(path.dirname(f), m[0]),
          })),
        )
        .filter(({ target }) => !target.startsWith(`${root}${path.sep}`) || !fs.existsSync(target))
        .map(({ at, target }) => `${at} → ${path.relative(root, target)}`),
    );
    expect(outside).toEqual([]);
  });
});
