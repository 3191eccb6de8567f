import { type PGlite, parse, protocol } from '@electric-sql/pglite';

// PGlite's `query` parses and plans every statement again (an unnamed statement, five protocol calls).
// A hot statement whose text repeats (its values all parameters) is parsed once here under a name, then
// each call sends Bind/Describe/Execute/Sync in one protocol call; PostgreSQL's plan cache plans it
// (custom plans first, a generic plan once that is no worse). Prepared statements outlive transactions
// and are re-planned by PostgreSQL itself when a table or index they use changes.

const MAX_STATEMENTS = 100;
const names = new WeakMap<PGlite, { byText: Map<string, string>; next: number }>();

function textOf(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export type PreparedStatement = { text: string; params: unknown[] };

/**
 * Runs `text` with `params` as a named prepared statement on PGlite. `inTransaction`: the caller holds
 * PGlite's transaction (drizzle's `transaction`), so only the statement lock is taken; otherwise both,
 * so the statement cannot land inside another caller's open transaction.
 */
export async function queryPrepared<T>(
  pg: PGlite,
  text: string,
  params: unknown[],
  inTransaction: boolean,
): Promise<T[]> {
  return queryPreparedBatch<T>(pg, [{ text, params }], inTransaction);
}

/**
 * Runs several prepared statements in one protocol call ending in one Sync, and answers the last one's
 * rows. Outside an explicit transaction the statements share the implicit transaction that Sync ends,
 * so `set_config(…, true)` in the first applies to the next ones and is gone after, without
 * BEGIN/COMMIT (decision 090); an error in any of them rolls all back.
 */
export async function queryPreparedBatch<T>(
  pg: PGlite,
  statements: PreparedStatement[],
  inTransaction: boolean,
): Promise<T[]> {
  const run = async (): Promise<T[]> => {
    let cache = names.get(pg);
    if (!cache) {
      cache = { byText: new Map(), next: 0 };
      names.set(pg, cache);
    }
    const s = protocol.serialize;
    const parts: Uint8Array[] = [];
    const used: [string, string][] = [];
    const fresh: string[] = [];
    for (const { text, params } of statements) {
      let name = cache.byText.get(text);
      if (name === undefined) {
        if (cache.byText.size >= MAX_STATEMENTS) {
          // Least recently used first (a Map keeps insertion order; a hit re-inserts).
          const [oldText, oldName] = cache.byText.entries().next().value as [string, string];
          cache.byText.delete(oldText);
          parts.push(s.close({ type: 'S', name: oldName }));
        }
        name = `pier_prepared_${cache.next++}`;
        parts.push(s.parse({ name, text }));
        fresh.push(name);
      } else cache.byText.delete(text);
      used.push([text, name]);
      // Every statement described: PGlite's parser needs each result's columns.
      parts.push(
        s.bind({ statement: name, values: params.map(textOf) }),
        s.describe({ type: 'P' }),
        s.execute({}),
      );
    }
    parts.push(s.sync());
    try {
      const messages = await pg.execProtocolStream(concat(parts), { syncToFs: !inTransaction });
      for (const [text, name] of used) cache.byText.set(text, name);
      const results = parse.parseResults(messages, pg.parsers);
      return results[results.length - 1]!.rows as T[];
    } catch (e) {
      // A statement parsed in a failed call may exist or not: close it (closing a missing one is no error).
      if (fresh.length)
        await pg.execProtocolStream(
          concat([...fresh.map((name) => s.close({ type: 'S', name })), s.sync()]),
          {},
        );
      for (const [text, name] of used) if (!fresh.includes(name)) cache.byText.set(text, name);
      throw e;
    }
  };
  return inTransaction ? pg.runExclusive(run) : pg._runExclusiveTransaction(() => pg.runExclusive(run));
}
