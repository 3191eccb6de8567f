import pino from 'pino';

// The process log is buffered: lines collect in a string and go out in one write of about LOG_BUFFER_BYTES,
// or every LOG_FLUSH_MS at the latest when traffic is light. A write per line (pino's stdout default under
// load) was the largest single cost of a function call after the response itself, and sonic-boom's own
// `minLength` buffering costs more per line than it saves (it measures the byte length of the whole pending
// buffer on every write): docs/benchmarks.md, fn-api.
const LOG_BUFFER_BYTES = 4096;
const LOG_FLUSH_MS = 200;

/** Buffers still holding lines, flushed synchronously when the process exits. */
const live = new Set<BufferedLog>();
let exitHookInstalled = false;

function flushAllOnExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // 'exit' runs on process.exit (main.ts ends that way after SIGTERM/SIGINT), at the natural end and after
  // an uncaught error; the underlying writes are synchronous, so nothing is still in flight.
  process.on('exit', () => {
    for (const b of live) b.flush();
  });
}

/** Lines in memory, written through a synchronous pino destination in chunks. */
class BufferedLog implements pino.DestinationStream {
  #pending = '';
  readonly #out: pino.DestinationStream;

  constructor(out: pino.DestinationStream) {
    this.#out = out;
    setInterval(() => this.flush(), LOG_FLUSH_MS).unref();
    live.add(this);
    flushAllOnExit();
  }

  write(line: string): void {
    // Concatenation makes a rope, flattened once when written.
    this.#pending += line;
    if (this.#pending.length >= LOG_BUFFER_BYTES) this.flush();
  }

  /** Writes what is pending now (pino's `logger.flush()` lands here). */
  flush(cb?: (err?: Error) => void): void {
    if (this.#pending) {
      const chunk = this.#pending;
      this.#pending = '';
      this.#out.write(chunk);
    }
    cb?.();
  }
}

/**
 * Where `pier serve` logs: stdout (or `dest`), buffered as above. Nothing is lost on a clean exit, SIGTERM
 * or SIGINT (main.ts exits through process.exit) or an uncaught error; only a hard kill (SIGKILL, out of
 * memory) can lose the last LOG_FLUSH_MS of lines. The writes are synchronous: a log reader that falls far
 * behind slows the server down rather than letting unwritten lines pile up in memory.
 */
export function logDestination(dest: number | string = 1): pino.DestinationStream {
  return new BufferedLog(pino.destination({ dest, sync: true }));
}
