import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { errorCatalogues, functions, manifests } from '../src/areas/index.ts';

// Every error code Pier answers is in a catalogue: the shared one (src/core/errors.ts), an infrastructure
// module's (src/core/*/errors.ts) or an area's (src/areas/<area>/errors.ts). The types check most of it
// (the factories, the generic notFound/conflict/unavailable, the route kits' `errors`); this also reads
// what the types cannot see: codes written straight into `new ApiError(…)`, and the registries as built.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = path.join(ROOT, 'src');

// `new ApiError(` with a code that is not a literal: only where the code is checked another way.
const COMPUTED_CODE_ALLOWED = new Set([
  'core/errors.ts', // the generic factories, their code typed as a catalogued code of their status
  'areas/models/proxy-credential.ts', // relays the envelope of the function (resolveModel) it calls
]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts') ? [full] : [];
  });
}

/**
 * Codes minted in the source: `new ApiError('X'`, `errors.notFound('X'` (and conflict, unavailable), and a
 * catalogue's own `error('X'` (`shared('X'` in core/errors.ts).
 */
const LITERAL_CODE =
  /(?:new ApiError|\.(?:notFound|conflict|unavailable)|(?<![\w.])(?:error|shared))\(\s*'([^']*)'/g;
const COMPUTED_CODE = /new ApiError\(\s*[^'\s]/g;

const infraCodes = new Set(
  manifests()
    .filter((a) => a.name === 'infrastructure')
    .flatMap((a) => a.errors ?? [])
    .flatMap((c) => Object.keys(c.codes)),
);
const allCodes = new Map<string, number>();
for (const c of errorCatalogues)
  for (const [code, spec] of Object.entries(c.codes)) allCodes.set(code, spec.status);

/** What a file under src may throw: an area's own codes and the infrastructure's; core only the latter. */
function allowedIn(file: string): Set<string> {
  const area = file.match(/^areas\/([^/]+)\//)?.[1];
  const own = manifests().find((a) => a.name === area)?.errors ?? [];
  return new Set([...infraCodes, ...own.flatMap((c) => Object.keys(c.codes))]);
}

describe('error catalogues', () => {
  it('name each code once, or again with the same status', () => {
    const seen = new Map<string, number>();
    for (const c of errorCatalogues) {
      for (const [code, spec] of Object.entries(c.codes)) {
        expect(code).toMatch(/^[A-Z][A-Z0-9_]*$/);
        expect(spec.status >= 400 && spec.status < 600, code).toBe(true);
        expect(spec.message.length, code).toBeGreaterThan(0);
        if (seen.has(code)) expect(spec.status, `${code} in two catalogues`).toBe(seen.get(code));
        seen.set(code, spec.status);
      }
    }
    expect(seen.size).toBeGreaterThan(100);
  });

  it('hold every code the source throws, each in its own area or the shared catalogues', () => {
    const stray: string[] = [];
    let found = 0;
    for (const full of sourceFiles(SRC)) {
      const file = path.relative(SRC, full).split(path.sep).join('/');
      const text = readFileSync(full, 'utf8');
      const allowed = allowedIn(file);
      for (const m of text.matchAll(LITERAL_CODE)) {
        found++;
        if (!allowed.has(m[1] as string)) stray.push(`${file}: ${m[1]}`);
      }
      if (text.match(COMPUTED_CODE) && !COMPUTED_CODE_ALLOWED.has(file)) {
        stray.push(`${file}: new ApiError with a computed code`);
      }
    }
    expect(found).toBeGreaterThan(100); // the scan sees the catalogues' own factories
    expect(stray).toEqual([]);
  });

  it('hold every code a function or a v1 route lists in its `errors`', () => {
    const routes = [
      ...functions.map((f) => ({ name: f.name, errors: f.errors as readonly string[] })),
      ...manifests()
        .flatMap((a) => a.v1 ?? [])
        .flatMap((g) => g.routes.map((r) => ({ name: r.name, errors: r.errors as readonly string[] }))),
    ];
    expect(routes.length).toBeGreaterThan(100);
    const stray = routes.flatMap((r) =>
      r.errors.filter((c) => !allCodes.has(c)).map((c) => `${r.name}: ${c}`),
    );
    expect(stray).toEqual([]);
  });
});
