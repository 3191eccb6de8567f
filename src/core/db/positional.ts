// Multi-row INSERTs with positional parameters ($1, $2, …): one statement per chunk instead of one per row,
// on both drivers. Chunks keep each statement under PostgreSQL's 65,535-parameter limit.

const MAX_PARAMS = 60_000;

export type Positional = { text: string; params: unknown[] };

/**
 * `INSERT INTO table (cols) VALUES (…), (…) <suffix>` for each chunk of rows. `exprs` wraps a column's
 * placeholder in SQL (`(p) => \`COALESCE(\${p}::timestamptz, now())\``), for casts and defaults.
 */
export function positionalInserts(
  table: string,
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
  opts: { exprs?: Record<string, (placeholder: string) => string>; suffix?: string } = {},
): Positional[] {
  const perChunk = Math.max(1, Math.floor(MAX_PARAMS / columns.length));
  const cols = columns.map((c) => `"${c}"`).join(', ');
  const wrap = columns.map((c) => opts.exprs?.[c] ?? ((p: string) => p));
  const out: Positional[] = [];
  for (let start = 0; start < rows.length; start += perChunk) {
    const chunk = rows.slice(start, start + perChunk);
    const params: unknown[] = [];
    const tuples = chunk.map((row) => {
      const marks = row.map((v, i) => {
        params.push(v);
        return wrap[i]!(`$${params.length}`);
      });
      return `(${marks.join(', ')})`;
    });
    out.push({
      text: `INSERT INTO ${table} (${cols}) VALUES ${tuples.join(', ')}${opts.suffix ? ` ${opts.suffix}` : ''}`,
      params,
    });
  }
  return out;
}
