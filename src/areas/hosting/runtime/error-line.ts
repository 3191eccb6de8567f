// The line of a build's or start's output that names what went wrong: a compiler's message (`error TS2322`,
// esbuild's `✘ [ERROR]`), a bundler plugin's, the first `Error:` (SyntaxError, TypeError, …), a framework's
// "failed to compile", a line starting with `error`, else npm's own first meaningful `npm error` line — not a
// stack's tail or a tool's closing notice. Used for a failed deployment's stored reason (decisions 095, 097)
// and by the CLI and the dashboard, which highlight the same line.

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, 'g');

/** Ordered: the most specific kinds of error line first; within a kind the earliest line wins. */
const ERROR_LINES: RegExp[] = [
  /\berror\s+TS\d+\b/, // tsc: src/App.tsx(3,7): error TS2322: …
  /✘ \[ERROR\]|\[ERROR\]/, // esbuild
  /\[vite:[\w-]+\]|\[plugin [^\]]+\]|RollupError|\[UNRESOLVED_IMPORT\]|\[PARSE_ERROR\]/i, // Vite, Rollup, Rolldown
  // Error: …, TypeError: …, RolldownError: …, Astro's `[CompilerError] Unexpected token`
  /^\s*(?:Uncaught\s+)?(?:Error \[\w+\]|(?:[A-Z]\w*)?Error)(?:\s*\[[\w-]+\])?:\s*\S|^\s*\[[A-Z]\w*Error\]\s+\S/,
  /^\s*(?:Failed to compile|Type error:|Build error occurred|error during build|(?:Build|Compilation) failed\b)/i,
  /^\s*(?:\[?error\]?|ERROR)\b[\s:[]/i, // generic "error: …" / "[error] …"
  /^npm (?:error|ERR!) (?!code |path |command |signal |A complete log|Lifecycle|errno )\S/, // npm's own words
];

/**
 * A tool's notice that the build failed, or a header over the error that follows it (`error during build:`,
 * Turbopack's `Error: Turbopack build failed with 1 error:`,
 * Rolldown's `[plugin x] /file:6:24` with only a place): it names no error, so any line that does wins over it.
 */
const NOTICE =
  /(?:✗ )?Build failed in [\d.]+\s*m?s$|^error during build:?$|\bbuild failed with \d+ errors?:?$|^\[plugin [^\]]+\]\s*\S+:\d+:\d+$/i;

export function stripAnsi(line: string): string {
  return line.replace(ANSI, '');
}

/** The line of a build's or start's output that names its error; null when none does. */
export function firstErrorLine(lines: readonly string[]): string | null {
  const clean = lines.map((l) => stripAnsi(l).trim()).filter((l) => l && !/^at\s/.test(l));
  for (const pass of [clean.filter((l) => !NOTICE.test(l)), clean]) {
    for (const re of ERROR_LINES) {
      const hit = pass.find((l) => re.test(l));
      if (hit) return hit.length > 300 ? `${hit.slice(0, 300)}…` : hit;
    }
  }
  return null;
}
