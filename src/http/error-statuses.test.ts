import { describe, expect, it } from 'vitest';
import { errorCatalogues } from '../areas/index.ts';
import { ERROR_STATUSES, FRAMEWORK_CODES } from './error-statuses.ts';

const SHARED = new Set([400, 401, 403, 404, 409, 429]);

describe('ERROR_STATUSES', () => {
  it('is every catalogued code of a status beyond the shared ones, with that status', () => {
    const catalogued = new Map<string, number>();
    for (const c of errorCatalogues)
      for (const [code, spec] of Object.entries(c.codes))
        if (!SHARED.has(spec.status) && !FRAMEWORK_CODES.has(code)) catalogued.set(code, spec.status);
    expect(catalogued.size).toBeGreaterThan(10);
    expect(Object.fromEntries([...catalogued].sort())).toEqual(
      Object.fromEntries(Object.entries(ERROR_STATUSES).sort()),
    );
  });
});
