import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// A clone of the project is all a user has: the README and docs/ point at the project's own pages and files,
// never at `../shared/…` (a folder beside the repository that only the original workspace had).

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
        .filter(({ line }) => /\.\.\/shared\b/.test(line))
        .map(({ at }) => at),
    );
    expect(outside).toEqual([]);
  });
});
