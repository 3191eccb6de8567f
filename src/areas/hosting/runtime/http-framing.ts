// Where HTTP/1.1 messages begin and end, for the spliced proxy path (proxy-splice.ts, decision 081). Pier does
// not parse requests into objects there; it only has to agree with the app (and with the client) on where each
// message ends, so that every request it forwards has had its Host checked and every response it forwards
// answers a request it forwarded. Disagreeing on that is request smuggling, so this accepts a strict subset:
// CRLF line ends, no folded lines, one Host, at most one Content-Length of digits, Transfer-Encoding only as
// exactly `chunked` and never beside a Content-Length. Anything else is "not simple": the request goes to
// Pier's own HTTP server (which parses fully, like the app would), a response ends the connection.

/** `none`: no body; a number: Content-Length; `chunked`; `close`: until the app closes (responses only). */
export type BodyFraming = 'none' | 'chunked' | 'close' | number;

export type RequestHead = {
  method: string;
  host: string;
  body: BodyFraming;
  /** The head to send to the app (ending in the blank line): X-Forwarded-* set, proxy credentials dropped. */
  forward: string;
};

export type ResponseHead = { status: number; body: BodyFraming; close: boolean };

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const REQUEST_LINE = /^([A-Z]{1,20}) (\S+) HTTP\/1\.([01])$/;
const DIGITS = /^\d{1,15}$/;

/** Splits a head (without its blank line) into lines; null when a line holds a bare CR or LF. */
function lines(head: string): string[] | null {
  const out = head.split('\r\n');
  for (const l of out) if (l.indexOf('\n') >= 0 || l.indexOf('\r') >= 0) return null;
  return out;
}

/** Name (lower-cased) and trimmed value of a header line; null when it is not a plain `name: value` line. */
function header(line: string): [string, string] | null {
  const colon = line.indexOf(':');
  if (colon <= 0) return null;
  const name = line.slice(0, colon);
  if (!TOKEN.test(name)) return null;
  return [name.toLowerCase(), line.slice(colon + 1).trim()];
}

/**
 * A request head the spliced path can forward as it is, with its X-Forwarded-* rewritten; null for anything
 * Pier's HTTP server should see instead (upgrades, CONNECT, odd framing, several or no Host).
 */
export function parseRequestHead(head: string, peer: string, proto: string): RequestHead | null {
  const ls = lines(head);
  if (!ls) return null;
  const rl = REQUEST_LINE.exec(ls[0]!);
  if (!rl) return null;
  const method = rl[1]!;
  if (method === 'CONNECT' || method === 'PRI') return null;
  let host: string | null = null;
  let length: number | null = null;
  let chunked = false;
  let xff = '';
  let out = `${ls[0]}\r\n`;
  for (let i = 1; i < ls.length; i++) {
    const h = header(ls[i]!);
    if (!h) return null;
    const [name, value] = h;
    switch (name) {
      case 'host':
        if (host !== null || !value) return null;
        host = value;
        break;
      case 'content-length':
        if (length !== null || !DIGITS.test(value)) return null;
        length = Number(value);
        break;
      case 'transfer-encoding':
        if (chunked || value.toLowerCase() !== 'chunked') return null;
        chunked = true;
        break;
      // A WebSocket (or h2c) upgrade turns the connection into a tunnel: Pier's server handles those.
      case 'upgrade':
        return null;
      case 'x-forwarded-for':
        xff = xff ? `${xff}, ${value}` : value;
        continue;
      case 'x-forwarded-proto':
      case 'x-forwarded-host':
      case 'proxy-authorization':
      case 'proxy-connection':
        continue;
    }
    out += `${ls[i]}\r\n`;
  }
  if (host === null || (chunked && length !== null)) return null;
  out += `x-forwarded-for: ${xff ? `${xff}, ${peer}` : peer}\r\nx-forwarded-proto: ${proto}\r\nx-forwarded-host: ${host}\r\n\r\n`;
  const body: BodyFraming = chunked ? 'chunked' : length ? length : 'none';
  return { method, host, body, forward: out };
}

/** A response head's framing; null when it cannot be framed with certainty (the connection is then ended). */
export function parseResponseHead(head: string, method: string): ResponseHead | null {
  const ls = lines(head);
  if (!ls) return null;
  const sl = /^HTTP\/1\.([01]) (\d{3})(?: .*)?$/.exec(ls[0]!);
  if (!sl) return null;
  const status = Number(sl[2]);
  let length: number | null = null;
  let chunked = false;
  let close = sl[1] === '0';
  for (let i = 1; i < ls.length; i++) {
    const h = header(ls[i]!);
    if (!h) return null;
    const [name, value] = h;
    if (name === 'content-length') {
      if (length !== null || !DIGITS.test(value)) return null;
      length = Number(value);
    } else if (name === 'transfer-encoding') {
      if (chunked || value.toLowerCase() !== 'chunked') return null;
      chunked = true;
    } else if (name === 'connection') {
      const v = value.toLowerCase();
      if (/(^|[\s,])close($|[\s,])/.test(v)) close = true;
      else if (sl[1] === '0' && /(^|[\s,])keep-alive($|[\s,])/.test(v)) close = false;
    }
  }
  if (chunked && length !== null) return null;
  let body: BodyFraming;
  if (method === 'HEAD' || status < 200 || status === 204 || status === 304) body = 'none';
  else if (chunked) body = 'chunked';
  else if (length !== null) body = length || 'none';
  else {
    body = 'close';
    close = true;
  }
  return { status, body, close };
}

const CHUNK_SIZE = /^([0-9a-fA-F]{1,12})(;.*)?$/;
const MAX_LINE = 8192;

/**
 * Follows a chunked body across buffers. scan() returns the index just past the body's bytes in `buf` from
 * `at` (buf.length while the body goes on); `done` says the body ended there. Throws on bad framing.
 */
export class ChunkedBody {
  done = false;
  /** 0: size line, 1: chunk data, 2: CRLF after data, 3: trailer lines */
  #state = 0;
  #left = 0;
  #line = '';

  scan(buf: Buffer, at: number): number {
    let i = at;
    while (i < buf.length && !this.done) {
      if (this.#state === 1) {
        const n = Math.min(this.#left, buf.length - i);
        i += n;
        this.#left -= n;
        if (this.#left === 0) this.#state = 2;
        continue;
      }
      const nl = buf.indexOf(10, i);
      const end = nl < 0 ? buf.length : nl + 1;
      this.#line += buf.toString('latin1', i, end);
      i = end;
      if (nl < 0) {
        if (this.#line.length > MAX_LINE) throw new Error('chunk line too long');
        break;
      }
      const line = this.#line;
      this.#line = '';
      if (line.length < 2 || line.charCodeAt(line.length - 2) !== 13) throw new Error('bare LF');
      const text = line.slice(0, -2);
      if (text.indexOf('\r') >= 0) throw new Error('bare CR');
      if (this.#state === 2) {
        if (text !== '') throw new Error('chunk data longer than its size');
        this.#state = 0;
      } else if (this.#state === 0) {
        const m = CHUNK_SIZE.exec(text);
        if (!m) throw new Error('bad chunk size');
        this.#left = Number.parseInt(m[1]!, 16);
        this.#state = this.#left === 0 ? 3 : 1;
      } else if (text === '') this.done = true;
      else if (!header(text)) throw new Error('bad trailer');
    }
    return i;
  }
}
