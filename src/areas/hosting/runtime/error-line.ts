// The line of a build's or start's output that names what went wrong: the first `Error:` (SyntaxError,
// TypeError, …), compiler message (`error TS2322`, esbuild's `✘ [ERROR]`) or line starting with `error`, else
// npm's own first `npm error` line. Used for a failed deployment's stored reason (decision 097).
// H1's build.ts exports one too (issue 34, builds half); the lead keeps one of them when merging.

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes start with ESC
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

const STRONG = [
  /^\s*(?:Uncaught\s+)?[A-Z]?\w*Error\b(?:\s*\[[\w-]+\])?:\s*\S/,
  /\berror\s+TS\d+\b/,
  /\[ERROR\]/,
  /^\s*error\b[\s:[]/i,
  /^\s*(?:Build|Compilation) failed\b/i,
];
const WEAK = [/^npm (?:error|ERR!)\s+\S/];

export function firstErrorLine(lines: readonly string[]): string | null {
  const clean = lines.map((l) => l.replace(ANSI, '').trim()).filter(Boolean);
  for (const res of [STRONG, WEAK]) {
    const hit = clean.find((l) => res.some((re) => re.test(l)));
    if (hit) return hit.length > 300 ? `${hit.slice(0, 300)}…` : hit;
  }
  return null;
}
