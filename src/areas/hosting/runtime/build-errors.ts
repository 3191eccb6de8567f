import { firstErrorLine, stripAnsi } from './error-line.ts';

// What a failed build is remembered by, in words: out of memory, its time limit, or the failing step and the
// first line that names its error (error-line.ts), not the tail of a stack trace or a tool's closing notice.

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
