// What a failed build is remembered by: the first line that names the error (a compiler's message, a
// bundler's, a thrown Error), not the tail of a stack trace or a tool's closing notice. Also exported for the
// CLI and the dashboard, which highlight the same line in the build log.

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, 'g');

/** Ordered: the most specific kinds of error line first; within a kind the earliest line wins. */
const ERROR_LINES: RegExp[] = [
  /\berror TS\d+:/, // tsc: src/App.tsx(3,7): error TS2322: …
  /✘ \[ERROR\]/, // esbuild
  /\[vite:[\w-]+\]|\[plugin [^\]]+\]|RollupError|\[UNRESOLVED_IMPORT\]|\[PARSE_ERROR\]/i, // Vite, Rollup, Rolldown
  /^\s*(?:Error \[\w+\]|(?:[A-Z]\w*)?Error)(?: \[\w+\])?:\s/, // Error: …, TypeError: …, SyntaxError: …
  /^\s*(?:Failed to compile|Type error:|Build error occurred|error during build)/i, // Next.js, Vite
  /^\s*(?:\[?error\]?|ERROR)\b[:\s]/, // generic "error: …" / "[error] …" / "ERROR …"
  /^npm (?:error|ERR!) (?!code |path |command |signal |A complete log|Lifecycle|errno )/, // npm's own words
];

export function stripAnsi(line: string): string {
  return line.replace(ANSI, '');
}

/** The line of a build's output that names its error; null when none does. */
export function firstErrorLine(lines: readonly string[]): string | null {
  const clean = lines.map(stripAnsi);
  for (const re of ERROR_LINES) {
    const hit = clean.find((l) => re.test(l) && !/^\s+at\s/.test(l));
    if (hit) return hit.trim();
  }
  return null;
}

/** Why the build ended, in words: out of memory, time limit, or the failing step and its error line. */
export function buildFailureReason(o: {
  code: number | null;
  signal: NodeJS.Signals | null;
  oomKills: number;
  memoryMb: number;
  timedOut: boolean;
  timeoutMs: number;
  step: string | null;
  lines: readonly string[];
}): string {
  if (o.timedOut)
    return `The build did not finish within its time limit (${Math.round(o.timeoutMs / 1000)} s) and was stopped.`;
  if (o.oomKills > 0)
    return `The build ran out of memory (limit ${o.memoryMb} MB) and was killed${o.step ? ` during \`${o.step}\`` : ''}.`;
  if (o.code === 137 || o.signal === 'SIGKILL')
    return `The build was killed${o.step ? ` during \`${o.step}\`` : ''}, most likely out of memory (limit ${o.memoryMb} MB).`;
  const first = firstErrorLine(o.lines);
  const at = o.step ? ` at \`${o.step}\`` : '';
  const head = `The build failed (exit code ${o.code ?? o.signal})${at}`;
  if (first) return `${head}: ${first}`;
  const tail = o.lines
    .map(stripAnsi)
    .filter((l) => l.trim())
    .slice(-6)
    .join('\n');
  return tail ? `${head}:\n${tail}` : `${head}.`;
}
