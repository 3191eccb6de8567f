// What bench/prof-summary.ts and bench/heap-summary.ts share: their number options and how a V8 profile's
// call frame is named (node_modules paths shortened to `~`).

export type CallFrame = { functionName: string; url: string; lineNumber: number };

export function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

export function label(n: { callFrame: CallFrame }): string {
  const f = n.callFrame;
  const where = f.url
    ? `${f.url.replace(/^file:\/\//, '').replace(/^.*node_modules\//, '~')}:${f.lineNumber + 1}`
    : '';
  return `${f.functionName || '(anonymous)'} ${where}`.trim();
}
