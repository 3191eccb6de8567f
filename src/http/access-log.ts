import { type FastifyBaseLogger, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
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

/**
 * Fastify's log controller with the access line as its "request completed" line. Fastify calls
 * requestCompleted once per request when the response has finished (or failed), after any onResponse
 * hooks: the same moment as an onResponse hook, without an onResponse hook runner (a closure and a callback
 * chain per request). Every other per-request line of Fastify's stays off (disableRequestLogging).
 */
export class AccessLogController extends LogController {
  #line: AccessLine | null = null;

  constructor() {
    super({ disableRequestLogging: true });
  }

  /** Starts writing access lines to this logger (the app's, which exists only once Fastify is built). */
  writeTo(log: FastifyBaseLogger): void {
    this.#line = accessLogger(log);
  }

  // No headers, no body, no query string (where a careless client might put a credential).
  override requestCompleted(_err: unknown, req: FastifyRequest, reply: FastifyReply): void {
    const line = this.#line;
    if (!line) return;
    const url = req.url;
    const q = url.indexOf('?');
    line(
      req.id,
      req.method,
      q < 0 ? url : url.slice(0, q),
      reply.statusCode,
      Math.round(reply.elapsedTime * 10) / 10,
    );
  }
}
