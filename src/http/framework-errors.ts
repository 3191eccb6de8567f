import http from 'node:http';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { type ApiError, errorBody, errors } from '../core/errors.ts';

// What Fastify and Node answer on their own, before any route runs, put in the error envelope: a path the
// router cannot decode or whose parameter is too long (frameworkErrors), and what Node's HTTP parser
// refuses or times out (clientErrorHandler). The error handler (error-handler.ts) covers the rest.

/**
 * The router's maxParamLength: the longest path parameter any schema accepts (an e-mail address, 320), so a
 * value the document allows never meets the router's 414 (openapi-errors.test.ts holds them to it).
 */
export const MAX_PARAM_LENGTH = 320;

/** Fastify's frameworkErrors option. */
export function frameworkErrors(err: FastifyError, _req: FastifyRequest, reply: FastifyReply): void {
  const apiErr =
    err.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? errors.uriTooLong()
      : err.code === 'FST_ERR_BAD_URL'
        ? errors.badUrl()
        : errors.internal();
  reply.headers(apiErr.headers).status(apiErr.status).send(errorBody(apiErr));
}

function clientError(err: NodeJS.ErrnoException): ApiError {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return errors.requestTimeout();
  if (err.code === 'HPE_HEADER_OVERFLOW') return errors.headersTooLarge();
  return errors.badRequest('The request is not valid HTTP.');
}

/**
 * Fastify's clientErrorHandler: Node's parser errors and timeouts, written straight to the socket (there is
 * no request object yet), as Fastify's default does but in the envelope.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const apiErr = clientError(err);
    const body = JSON.stringify(errorBody(apiErr));
    socket.write(
      `HTTP/1.1 ${apiErr.status} ${http.STATUS_CODES[apiErr.status]}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

/** How much of a refused body is read and thrown away so the client can read its 413. */
export const DRAIN_BOUND = { bytes: 32 * 1024 * 1024, ms: 10_000 };

/**
 * Reads and discards the rest of a request body, up to a bound. Answering a 413 while the client is still
 * sending and then closing makes the client's write fail (EPIPE, ECONNRESET) before it reads the answer;
 * once the body is read the answer arrives first. Resolves true when the body ended within the bound.
 */
export function drainBody(stream: Readable, bound = DRAIN_BOUND): Promise<boolean> {
  const raw = stream as Readable & { complete?: boolean };
  if (raw.complete || raw.readableEnded || raw.destroyed) return Promise.resolve(true);
  return new Promise((resolve) => {
    let seen = 0;
    const finish = (ended: boolean) => {
      clearTimeout(timer);
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('close', onError);
      resolve(ended);
    };
    const onData = (chunk: Buffer | string) => {
      seen += chunk.length;
      if (seen > bound.bytes) finish(false);
    };
    const onEnd = () => finish(true);
    const onError = () => finish(false);
    const timer = setTimeout(() => finish(false), bound.ms);
    timer.unref?.();
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('close', onError);
    stream.resume();
  });
}

/**
 * Which methods each routed path answers, so a known path called with another method is a 405 with `Allow`
 * rather than a 404. Consulted only when no route matched. Wildcard routes (the dashboard's pages, the
 * function API's catch-alls, blobs) answer for themselves and are left out.
 */
export class MethodIndex {
  readonly #routes: { re: RegExp; method: string }[] = [];

  add(method: string | string[], url: string): void {
    if (url.includes('*')) return;
    const pattern = url
      .split('/')
      .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    const re = new RegExp(`^${pattern}$`);
    for (const m of Array.isArray(method) ? method : [method])
      if (m !== 'HEAD') this.#routes.push({ re, method: m });
  }

  /** The methods that would answer this path (without its query), sorted; empty for an unknown path. */
  allowed(path: string): string[] {
    const out = new Set<string>();
    for (const r of this.#routes) if (r.re.test(path)) out.add(r.method);
    return [...out].sort();
  }
}
