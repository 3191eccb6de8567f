import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';

export type AccessLine = (reqId: string, method: string, path: string, status: number, ms: number) => void;

type PinoInternals = Record<symbol, unknown> & {
  levels?: { values?: Record<string, number> };
  isLevelEnabled?: (level: string) => boolean;
};

/**
 * The one access line per request (`msg: "request"`). It is built only from fields that cannot hold a
 * credential (request id, method, path without the query string, status, duration), so it is written
 * straight to the logger's stream in pino's own line format, skipping the per-line redaction pass and the
 * child logger. Any other logger gets an ordinary `info` call.
 */
export function accessLogger(log: FastifyBaseLogger): AccessLine {
  const l = log as unknown as PinoInternals;
  const stream = l[pino.symbols.streamSym] as { write?: (line: string) => unknown } | undefined;
  const chindings = l[pino.symbols.chindingsSym];
  const level = l.levels?.values?.info;
  const plainPino =
    typeof stream?.write === 'function' &&
    typeof chindings === 'string' &&
    typeof level === 'number' &&
    typeof l.isLevelEnabled === 'function' &&
    l[pino.symbols.messageKeySym] === 'msg' &&
    l[pino.symbols.timeSym] === pino.stdTimeFunctions.epochTime &&
    !l[pino.symbols.mixinSym] &&
    !(stream as Record<symbol, unknown>)[pino.symbols.needsMetadataGsym];
  if (!plainPino) {
    return (reqId, method, path, status, ms) => log.info({ reqId, method, path, status, ms }, 'request');
  }
  const write = stream!.write!.bind(stream);
  const enabled = l.isLevelEnabled!.bind(log);
  return (reqId, method, path, status, ms) => {
    if (!enabled('info')) return;
    write(
      `{"level":${level},"time":${Date.now()}${chindings},"reqId":${JSON.stringify(reqId)},` +
        `"method":${JSON.stringify(method)},"path":${JSON.stringify(path)},"status":${status | 0},` +
        `"ms":${Number.isFinite(ms) ? ms : 0},"msg":"request"}\n`,
    );
  };
}
