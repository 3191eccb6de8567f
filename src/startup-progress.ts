// What `npm start` prints while it starts (issue 39): one line per step with its time, so a slow start says
// where it is (loading code, database, migrations, job queue, workers, HTTP). Plain lines on stdout, beside
// the JSON log; nothing here is secret.

export type StartupProgress = {
  /** Ends the running step (printing it with its time) and starts the next one. */
  step(label: string, detail?: string): void;
  /** Ends the last step; returns the whole start-up time in ms. */
  done(): number;
};

export function startupProgress(
  write: (s: string) => void = (s) => process.stdout.write(s),
  now: () => number = () => performance.now(),
): StartupProgress {
  const t0 = now();
  let current: { label: string; detail?: string; at: number } | null = null;
  const end = () => {
    if (!current) return;
    const ms = now() - current.at;
    const detail = current.detail ? ` ${current.detail}` : '';
    write(`  ${current.label.padEnd(12)}${detail} (${fmt(ms)})\n`);
    current = null;
  };
  return {
    step(label, detail) {
      end();
      current = { label, detail, at: now() };
    },
    done() {
      end();
      return now() - t0;
    },
  };
}

function fmt(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
