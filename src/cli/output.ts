import type { Command } from 'commander';

// Human output is a table or a few lines; `--json` prints the server's answer as it came, for scripts.

export type Column<T> = { header: string; value: (row: T) => string | null | undefined };

/** Left-aligned columns separated by two spaces, headers in capitals; an empty list prints `empty`. */
export function table<T>(rows: readonly T[], columns: Column<T>[], empty: string): string {
  if (rows.length === 0) return `${empty}\n`;
  const cells = rows.map((r) => columns.map((c) => clean(c.value(r) ?? '-')));
  const headers = columns.map((c) => c.header.toUpperCase());
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i]!.length)));
  const line = (parts: string[]) =>
    parts
      .map((p, i) => (i === parts.length - 1 ? p : p.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...cells.map(line)].join('\n') + '\n';
}

/** `key: value` lines with the keys aligned. */
export function fields(pairs: [string, string | null | undefined][]): string {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${`${k}:`.padEnd(width + 1)} ${clean(v ?? '-')}`).join('\n') + '\n';
}

// Values come from the server; control characters could rewrite the terminal, so they never reach it.
function clean(s: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
  return s.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
}

export function wantsJson(cmd: Command): boolean {
  return Boolean(cmd.optsWithGlobals().json);
}

export function toJson(data: unknown): string {
  return `${JSON.stringify(data, null, 2)}\n`;
}
