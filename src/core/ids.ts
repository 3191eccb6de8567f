import { z } from 'zod';

// Row ids are PostgreSQL uuids. A path or query id is checked before it reaches SQL: a malformed one is the
// resource's 404 (or an empty page), not the 500 of PostgreSQL's "invalid input syntax for type uuid".
// The canonical hyphenated form in either case and of any version: zod's z.uuid() also rejects versions and
// variants outside RFC 9562, which a uuid column stores all the same.

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(s: string | null | undefined): boolean {
  return typeof s === 'string' && UUID_RE.test(s);
}

/** A request field that must be a row id (same check as isUuid). */
export const uuidInput = z.string().regex(UUID_RE);
