import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Keyring } from './crypto.ts';
import { ApiError } from './errors.ts';
import {
  cursorPage,
  dataPage,
  decodeCursor,
  encodeCursor,
  keysetSchema,
  offsetPage,
  offsetQuery,
} from './pagination.ts';

const keyring = Keyring.random();

describe('pagination', () => {
  it('limit/offset queries apply the stated default and maximum', () => {
    const q = offsetQuery({ defaultLimit: 50, maxLimit: 100 });
    expect(q.parse({})).toEqual({ limit: 50, offset: 0 });
    expect(q.parse({ limit: '100', offset: '5' })).toEqual({ limit: 100, offset: 5 });
    expect(q.safeParse({ limit: '101' }).success).toBe(false);
    expect(q.safeParse({ offset: '-1' }).success).toBe(false);
    expect(offsetPage([1, 2], 5, { limit: 2, offset: 2 })).toEqual({
      items: [1, 2],
      total: 5,
      hasMore: true,
    });
    expect(offsetPage([5], 5, { limit: 2, offset: 4 })).toEqual({ items: [5], total: 5, hasMore: false });
  });

  it('cursors round-trip and refuse tampering or another list', () => {
    const c = encodeCursor(keyring, 'list:a', { at: '2026-01-01T00:00:00.000Z', id: 'x' });
    expect(decodeCursor(keyring, 'list:a', c, keysetSchema)).toEqual({
      at: '2026-01-01T00:00:00.000Z',
      id: 'x',
    });
    const [body, sig] = c.split('.');
    const forged = `${Buffer.from(JSON.stringify({ at: 'z', id: 'y' })).toString('base64url')}.${sig}`;
    for (const bad of [forged, `${body}.x${sig}`, 'garbage', `${c}.x`, '']) {
      expect(() => decodeCursor(keyring, 'list:a', bad, keysetSchema)).toThrow(ApiError);
    }
    expect(() => decodeCursor(keyring, 'list:b', c, keysetSchema)).toThrow(/cursor/);
    expect(() => decodeCursor(Keyring.random(), 'list:a', c, keysetSchema)).toThrow(/cursor/);
    expect(() => decodeCursor(keyring, 'list:a', c, z.object({ n: z.number() }))).toThrow(/cursor/);
  });

  it('cursor pages use limit + 1 rows to tell whether more exist', () => {
    const rows = [1, 2, 3].map((n) => ({ id: `i${n}`, at: `t${n}` }));
    const full = cursorPage(keyring, 's', rows, 2, (r) => r);
    expect(full.items).toHaveLength(2);
    expect(decodeCursor(keyring, 's', full.nextCursor!, keysetSchema)).toEqual({ id: 'i2', at: 't2' });
    const last = cursorPage(keyring, 's', rows, 3, (r) => r);
    expect(last.nextCursor).toBeNull();
    expect(dataPage(last)).toEqual({ data: rows, nextCursor: null });
  });
});
