import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_STATUSES, FRAMEWORK_CODES } from './error-statuses.ts';

const SHARED = new Set([400, 401, 403, 404, 409, 429]);

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [p] : [];
  });
}

describe('ERROR_STATUSES', () => {
  it('names every code thrown with a status beyond the shared ones, with that status', () => {
    const thrown = new Map<string, number>();
    for (const file of sources(path.join(import.meta.dirname, '..'))) {
      const text = fs.readFileSync(file, 'utf8');
      for (const m of text.matchAll(/new ApiError\(\s*'([A-Z_]+)',\s*(\d{3})/g))
        if (!SHARED.has(Number(m[2])) && !FRAMEWORK_CODES.has(m[1]!)) thrown.set(m[1]!, Number(m[2]));
    }
    expect(thrown.size).toBeGreaterThan(10);
    expect(Object.fromEntries([...thrown].sort())).toEqual(
      Object.fromEntries(Object.entries(ERROR_STATUSES).sort()),
    );
  });
});
