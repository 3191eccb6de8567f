import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// One file name per role (docs/areas.md): a reader looking for an area's functions or v1 routes finds them by
// the file's name alone, so a defineFn or defineRoute written anywhere else fails here.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = path.join(ROOT, 'src');

// The kits that build routes for others: they call defineRoute on behalf of the v1 files that use them.
const KITS = new Set(['src/areas/integrations/unified-route-kit.ts']);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sources(full);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts') ? [full] : [];
  });
}

const files = sources(SRC).map((f) => ({
  rel: path.relative(ROOT, f).split(path.sep).join('/'),
  name: path.basename(f),
  text: readFileSync(f, 'utf8'),
}));

const isFnFile = (name: string) => name === 'fn.ts' || name.endsWith('-fn.ts');
const isV1File = (name: string) => name === 'v1.ts' || name.endsWith('-v1.ts');

describe('file names by role', () => {
  it('defines function-API functions only in fn.ts or <topic>-fn.ts', () => {
    const misplaced = files
      .filter((f) => f.text.includes('defineFn(') && !isFnFile(f.name))
      .map((f) => f.rel);
    expect(misplaced).toEqual([]);
  });

  it('defines v1 routes only in v1.ts or <topic>-v1.ts (and the route kits)', () => {
    const misplaced = files
      .filter((f) => f.text.includes('defineRoute(') && !isV1File(f.name) && !KITS.has(f.rel))
      .map((f) => f.rel);
    expect(misplaced).toEqual([]);
  });

  it('names an area file for v1 only as v1.ts or <topic>-v1.ts', () => {
    const odd = files
      .filter((f) => f.rel.startsWith('src/areas/') && /(^|-)v1(-|\.)/.test(f.name) && !isV1File(f.name))
      .map((f) => f.rel);
    expect(odd).toEqual([]);
  });

  it('finds the defineFn calls it checks', () => {
    // Guards the test itself: a refactor of defineFn's spelling would otherwise make the first check vacuous.
    expect(files.filter((f) => isFnFile(f.name) && f.text.includes('defineFn(')).length).toBeGreaterThan(10);
  });
});
