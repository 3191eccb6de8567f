import type { LogLine } from './follow.ts';

// How log lines reach a person: an app's ANSI colours kept on a terminal and stripped anywhere else (a CI
// log, a file, a pipe), and a failed deployment's first error line marked so the eye finds it.

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escape sequences start with ESC
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** The line as it should be printed: colours kept on a TTY only. */
export function forOutput(text: string, tty: boolean): string {
  return tty ? text : stripAnsi(text);
}

const STRONG = [
  /^\s*(?:Uncaught\s+)?[A-Z]?\w*Error\b(?:\s*\[[\w-]+\])?:\s*\S/,
  /\berror\s+TS\d+\b/,
  /\[ERROR\]/,
  /^\s*error\b[\s:[]/i,
  /^\s*(?:Build|Compilation) failed\b/i,
];
const WEAK = [/^npm (?:error|ERR!)\s+\S/];

/** Index of the line naming the error (the same rule as the server's stored reason), or -1. */
export function firstErrorIndex(lines: readonly string[]): number {
  const clean = lines.map((l) => stripAnsi(l).trim());
  for (const res of [STRONG, WEAK]) {
    const i = clean.findIndex((l) => res.some((re) => re.test(l)));
    if (i >= 0) return i;
  }
  return -1;
}

/**
 * Index of the line the stored failure reason quotes: Pier's reason ends with the error line it picked
 * (decision 097), so the mark and the reason agree; -1 when no line is quoted.
 */
export function quotedLineIndex(lines: readonly string[], reason: string): number {
  return lines.findIndex((l) => {
    const text = stripAnsi(l).trim();
    if (text.length < 4) return false;
    return reason.endsWith(text) || (text.length > 300 && reason.endsWith(`${text.slice(0, 300)}…`));
  });
}

/**
 * A failed deployment's own build/start lines with the first error line marked — the one its stored reason
 * quotes, else the first that looks like an error: `>` in the margin always, and bold red on a terminal.
 */
export function failureLines(lines: readonly LogLine[], tty: boolean, reason?: string): string[] {
  const texts = lines.map((l) => l.line);
  const quoted = reason ? quotedLineIndex(texts, reason) : -1;
  const at = quoted >= 0 ? quoted : firstErrorIndex(texts);
  return lines.map((l, i) => {
    const text = forOutput(l.line, tty);
    if (i !== at) return `  | ${text}`;
    return tty ? `\x1b[1;31m> | ${stripAnsi(text)}\x1b[0m` : `> | ${text}`;
  });
}
