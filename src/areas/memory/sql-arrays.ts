import { type SQL, sql } from 'drizzle-orm';

/** A PostgreSQL text[] literal ({"a","b"}): every element quoted, `"` and `\` escaped. */
function textArrayLiteral(list: string[]): string {
  return `{${list.map((v) => `"${v.replace(/[\\"]/g, (c) => `\\${c}`)}"`).join(',')}}`;
}

/**
 * A text[] as one parameter, so a statement's text does not change with how many elements it gets (a
 * prepared statement is parsed and planned once per text); drizzle would expand an array into a row.
 */
export function textArrayParam(list: string[]): SQL {
  return sql`${textArrayLiteral(list)}::text[]`;
}
