import { z } from 'zod';
import type { Keyring } from './crypto.ts';
import { errors } from './errors.ts';

// The three page shapes of the v1 contract, built by one helper so every area answers alike:
//  - limit/offset: `{ items, total, hasMore }` (mail, CDN, memory, workflows)
//  - cursor: `{ items, nextCursor }` (web data)
//  - integration style: `{ data, nextCursor }`
// Cursors are opaque: base64url JSON plus an HMAC (keyring.sign), so a client cannot forge or edit one;
// a tampered or foreign cursor is a 400 INVALID_CURSOR, never a 500.

export type OffsetOptions = { defaultLimit: number; maxLimit: number };

/** Query schema for limit/offset with the area's stated default and maximum (strings coerced). */
export function offsetQuery(o: OffsetOptions) {
  return z.object({
    limit: z.coerce.number().int().min(1).max(o.maxLimit).default(o.defaultLimit),
    offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
  });
}

export type OffsetPage<T> = { items: T[]; total: number; hasMore: boolean };

export function offsetPage<T>(
  items: T[],
  total: number,
  q: { limit: number; offset: number },
): OffsetPage<T> {
  return { items, total, hasMore: q.offset + items.length < total };
}

export function offsetPageSchema<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), total: z.number().int(), hasMore: z.boolean() });
}

/** Query schema for cursor pages (limit default/max as the area states). */
export function cursorQuery(o: OffsetOptions) {
  return z.object({
    limit: z.coerce.number().int().min(1).max(o.maxLimit).default(o.defaultLimit),
    cursor: z.string().max(2048).optional(),
  });
}

export function cursorPageSchema<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), nextCursor: z.string().nullable() });
}

export function dataPageSchema<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), nextCursor: z.string().nullable() });
}

/**
 * Signs a cursor payload. `scope` binds the cursor to one list (e.g. `mail.list:<orgId>:<env>`) so a
 * cursor of one tenant or one list is rejected by another.
 */
export function encodeCursor(keyring: Keyring, scope: string, payload: Record<string, unknown>): string {
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${body}.${keyring.sign(`cursor:${scope}:${body}`)}`;
}

export function decodeCursor<S extends z.ZodType>(
  keyring: Keyring,
  scope: string,
  cursor: string,
  schema: S,
): z.infer<S> {
  const [body, sig, extra] = cursor.split('.');
  if (!body || !sig || extra !== undefined || !keyring.verify(`cursor:${scope}:${body}`, sig)) {
    throw errors.invalidCursor();
  }
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    throw errors.invalidCursor();
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw errors.invalidCursor();
  return parsed.data;
}

/** A keyset position: the last item's sort value and id (ties broken by id). */
export const keysetSchema = z.object({ at: z.string(), id: z.string() });
export type Keyset = z.infer<typeof keysetSchema>;

/**
 * Builds a cursor page from `limit + 1` fetched rows: the extra row only tells that more exist.
 * `position` gives the keyset of an item for the next cursor.
 */
export function cursorPage<T>(
  keyring: Keyring,
  scope: string,
  rows: T[],
  limit: number,
  position: (item: T) => Keyset,
): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  const nextCursor = rows.length > limit && last ? encodeCursor(keyring, scope, position(last)) : null;
  return { items, nextCursor };
}

export function dataPage<T>(page: { items: T[]; nextCursor: string | null }): {
  data: T[];
  nextCursor: string | null;
} {
  return { data: page.items, nextCursor: page.nextCursor };
}
