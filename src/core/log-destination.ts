import pino from 'pino';

// The process log is buffered: lines collect in memory and go out in writes of LOG_BUFFER_BYTES, or every
// LOG_FLUSH_MS at the latest when traffic is light. A write per line (pino's stdout default writes each
// line as soon as the previous write is done, so nearly one syscall per request under load) was the
// largest single cost of a function call after the response itself (docs/benchmarks.md, fn-api).
const LOG_BUFFER_BYTES = 4096;
const LOG_FLUSH_MS = 200;

/**
 * Where `pier serve` logs: stdout (or `dest`), asynchronous like pino's default, but buffered. Nothing is
 * lost on a clean exit: pino registers the stream to be flushed synchronously when the process exits
 * (main.ts ends through process.exit after SIGTERM/SIGINT, an uncaught error exits too); only a hard kill
 * (SIGKILL, out of memory) can lose the last LOG_FLUSH_MS of lines.
 */
export function logDestination(dest: number | string = 1): pino.DestinationStream {
  return pino.destination({ dest, sync: false, minLength: LOG_BUFFER_BYTES, periodicFlush: LOG_FLUSH_MS });
}
