import net from 'node:net';
import { ChunkedBody, parseRequestHead, parseResponseHead } from './http-framing.ts';
import type { NodeInstance } from './instances.ts';

// The spliced proxy path (docs/decisions/081-spliced-proxy-path.md). A client connection whose first request
// names a Node app that cannot take the connection itself (no hand-off: `npm start`-style commands, or a TLS
// proxy in front) is piped to a connection of Pier's own to the app's socket. Pier copies bytes both ways and
// finds where each message ends (http-framing.ts), without building request or response objects: per request
// it reads the head once, checks its Host, rewrites X-Forwarded-*, and counts the response that answers it.
// A request for another app waits until every response before it is out, then the upstream connection
// changes; anything Pier's own HTTP server must answer (its routes, static sites, unknown hosts, upgrades, odd
// framing) is handed, with its bytes, to that server for the rest of the connection.

/** Node's own limit on a request head; a longer one goes to the HTTP server, which answers 431. */
const MAX_HEAD = 16 * 1024;
const MAX_RESPONSE_HEAD = 64 * 1024;
/** A client connection with nothing outstanding is closed after this long idle (Node's headersTimeout)… */
const IDLE_MS = 60_000;
/** …and one whose request head takes longer than this in all (a client trickling bytes). */
const HEAD_MS = 60_000;
const CRLF2 = Buffer.from('\r\n\r\n');

const BAD_GATEWAY = (() => {
  const body =
    '<!doctype html><html><head><meta charset="utf-8"><title>App unavailable</title></head><body style="font-family:system-ui;max-width:40rem;margin:4rem auto"><h1>App unavailable</h1><p>The app did not answer; it may be restarting.</p><p style="color:#888">Pier</p></body></html>\n';
  return `HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/html; charset=utf-8\r\ncache-control: no-store\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
})();

/** The app process a request's Host leads to, or null when Pier's own HTTP server must answer it. */
export type SpliceRoute = (host: string) => NodeInstance | null;
/** Gives the client connection, with bytes already read from it, to Pier's HTTP server. */
export type ToServer = (socket: net.Socket, bytes: Buffer | null) => void;

export class SplicedConnection {
  readonly #client: net.Socket;
  readonly #route: SpliceRoute;
  readonly #toServer: ToServer;
  readonly #proto: string;
  readonly #onDone: (c: SplicedConnection) => void;
  /** Client bytes read and not yet forwarded: a partial head, or a head waiting for a switch. */
  #pending: Buffer | null;
  /** What is left of the request body being forwarded: bytes, or the chunked framing. */
  #reqBody: number | ChunkedBody | null = null;
  #inst: NodeInstance | null = null;
  #up: net.Socket | null = null;
  /** Methods of the requests forwarded and not yet answered in full, oldest first. */
  #methods: string[] = [];
  /** Start of a response head not yet complete (not yet forwarded). */
  #resHead: Buffer | null = null;
  /** What is left of the response body being forwarded; null between responses. */
  #resBody: number | ChunkedBody | 'close' | null = null;
  /** Bytes of the oldest outstanding response went to the client (a failure can no longer be a 502 page). */
  #resStarted = false;
  #resClose = false;
  /** A request waits for every earlier response before it changes upstream or goes to the HTTP server. */
  #waiting = false;
  /** Pier is stopping: no further request is read, and the connection closes once nothing is outstanding. */
  #closing = false;
  /** The client ended its side: what it sent is answered, then the connection closes. */
  #clientEnded = false;
  #dead = false;
  #drainWait = false;
  /** When the incomplete request head in #pending began (0: none). */
  #headSince = 0;

  constructor(
    client: net.Socket,
    head: Buffer,
    opts: { route: SpliceRoute; toServer: ToServer; proto: string; onDone: (c: SplicedConnection) => void },
  ) {
    this.#client = client;
    this.#pending = head;
    this.#route = opts.route;
    this.#toServer = opts.toServer;
    this.#proto = opts.proto;
    this.#onDone = opts.onDone;
    client.on('data', this.#onClientData);
    client.on('end', this.#onClientEnd);
    client.on('error', this.#onClientGone);
    client.on('close', this.#onClientGone);
    client.setTimeout(IDLE_MS, this.#onTimeout);
    this.#pump();
    if (!this.#dead && !this.#waiting) client.resume();
  }

  /** Over: closed, or given to Pier's HTTP server. */
  get done(): boolean {
    return this.#dead;
  }

  /** Pier is stopping: close now when idle, else after the outstanding responses. */
  close(): void {
    if (this.#methods.length === 0 && this.#reqBody === null) this.#finish();
    else this.#closing = true;
  }

  #onClientData = (chunk: Buffer): void => {
    this.#pending = this.#pending ? Buffer.concat([this.#pending, chunk]) : chunk;
    this.#pump();
  };

  #onClientEnd = (): void => {
    this.#clientEnded = true;
    // A body cut short cannot be answered; with nothing outstanding there is nothing left to answer.
    if (this.#reqBody !== null) this.#finish();
    else if (this.#methods.length === 0 && !this.#waiting) this.#endClient();
  };

  #onClientGone = (): void => {
    this.#finish();
  };

  #onTimeout = (): void => {
    if (this.#methods.length === 0 && this.#reqBody === null) this.#finish();
  };

  /** Forwards every complete request (and body bytes) in #pending. */
  #pump(): void {
    while (this.#pending && !this.#dead) {
      const buf = this.#pending;
      if (this.#reqBody !== null) {
        let end: number;
        if (typeof this.#reqBody === 'number') {
          end = Math.min(this.#reqBody, buf.length);
          this.#reqBody -= end;
          if (this.#reqBody === 0) this.#reqBody = null;
        } else {
          try {
            end = this.#reqBody.scan(buf, 0);
          } catch {
            this.#finish();
            return;
          }
          if (this.#reqBody.done) this.#reqBody = null;
        }
        this.#send(end === buf.length ? buf : buf.subarray(0, end));
        this.#pending = end === buf.length ? null : buf.subarray(end);
        continue;
      }
      // Pier is stopping: no new request starts; the connection ends once the outstanding ones are answered.
      if (this.#closing) {
        this.#pending = null;
        return;
      }
      const end = buf.indexOf(CRLF2);
      if (end < 0) {
        if (buf.length > MAX_HEAD) {
          if (this.#methods.length > 0) this.#wait();
          else this.#fallback();
        } else if (this.#headSince === 0) this.#headSince = Date.now();
        else if (Date.now() - this.#headSince > HEAD_MS) this.#finish();
        return;
      }
      this.#headSince = 0;
      const req = parseRequestHead(
        buf.toString('latin1', 0, end),
        this.#client.remoteAddress ?? '',
        this.#proto,
      );
      const inst = req ? this.#route(req.host) : null;
      if (!req || !inst || inst !== this.#inst || !this.#up) {
        if (this.#methods.length > 0) {
          this.#wait();
          return;
        }
        this.#dropUpstream();
        if (!req || !inst) {
          this.#fallback();
          return;
        }
        this.#connect(inst);
      }
      this.#methods.push(req!.method);
      inst!.inflight++;
      this.#pending = buf.length === end + 4 ? null : buf.subarray(end + 4);
      if (req!.body === 'chunked') this.#reqBody = new ChunkedBody();
      else if (typeof req!.body === 'number') this.#reqBody = req!.body;
      this.#send(req!.forward);
    }
  }

  #send(data: Buffer | string): void {
    const up = this.#up!;
    if (up.write(data, 'latin1') || this.#drainWait) return;
    this.#drainWait = true;
    this.#client.pause();
    up.once('drain', () => {
      this.#drainWait = false;
      if (!this.#waiting && !this.#dead) this.#client.resume();
    });
  }

  #wait(): void {
    this.#waiting = true;
    this.#client.pause();
  }

  #connect(inst: NodeInstance): void {
    const up = inst.proc.socketPath
      ? net.connect(inst.proc.socketPath)
      : net.connect(inst.proc.port, '127.0.0.1');
    if (!inst.proc.socketPath) up.setNoDelay(true);
    this.#up = up;
    this.#inst = inst;
    this.#resHead = null;
    this.#resBody = null;
    this.#resStarted = false;
    up.on('data', (chunk: Buffer) => this.#onUpData(up, chunk));
    // The client's own pace applies: a slow reader slows the app down instead of filling Pier's memory.
    this.#client.on('drain', () => up.resume());
    const gone = () => this.#onUpGone(up);
    up.on('end', gone);
    up.on('close', gone);
    up.on('error', gone);
  }

  #dropUpstream(): void {
    const up = this.#up;
    this.#up = null;
    this.#inst = null;
    if (up) {
      this.#client.removeAllListeners('drain');
      up.destroy();
    }
  }

  /** One response went out in full. */
  #completed(): void {
    this.#methods.shift();
    if (this.#inst) this.#inst.inflight--;
    this.#resBody = null;
    this.#resStarted = false;
  }

  #onUpData(up: net.Socket, data: Buffer): void {
    if (up !== this.#up || this.#dead) return;
    let chunk = data;
    if (this.#resHead) {
      chunk = Buffer.concat([this.#resHead, data]);
      this.#resHead = null;
    }
    let i = 0;
    let keep = -1;
    let bad = false;
    let close = false;
    while (i < chunk.length) {
      // Bytes nobody asked for: forwarding them would answer a later request, possibly another tenant's.
      if (this.#methods.length === 0 || close) {
        bad = true;
        break;
      }
      const body = this.#resBody;
      if (body === null) {
        const end = chunk.indexOf(CRLF2, i);
        if (end < 0) {
          if (chunk.length - i > MAX_RESPONSE_HEAD) bad = true;
          else keep = i;
          break;
        }
        const res = parseResponseHead(chunk.toString('latin1', i, end), this.#methods[0]!);
        // 101 answers only upgrades, and those never take this path.
        if (!res || res.status === 101) {
          bad = true;
          break;
        }
        i = end + 4;
        this.#resStarted = true;
        if (res.status < 200) continue;
        this.#resClose = res.close;
        if (res.body === 'none') {
          close = res.close;
          this.#completed();
        } else this.#resBody = res.body === 'chunked' ? new ChunkedBody() : res.body;
      } else if (body === 'close') {
        i = chunk.length;
      } else if (typeof body === 'number') {
        const n = Math.min(body, chunk.length - i);
        i += n;
        if (body === n) {
          close = this.#resClose;
          this.#completed();
        } else this.#resBody = body - n;
      } else {
        try {
          i = body.scan(chunk, i);
        } catch {
          bad = true;
          break;
        }
        if (body.done) {
          close = this.#resClose;
          this.#completed();
        }
      }
    }
    const out = keep >= 0 ? chunk.subarray(0, keep) : i === chunk.length ? chunk : chunk.subarray(0, i);
    if (keep >= 0) this.#resHead = chunk.subarray(keep);
    if (out.length > 0 && !this.#client.write(out)) up.pause();
    if (bad) this.#upstreamFailed();
    else if (close) this.#endClient();
    else if (this.#methods.length === 0) this.#idle();
  }

  /** Every response is out: a waiting request may switch now, a closing connection ends. */
  #idle(): void {
    if (this.#waiting) {
      this.#waiting = false;
      this.#pump();
      if (!this.#dead && !this.#waiting && !this.#drainWait) this.#client.resume();
    }
    if (this.#dead || this.#methods.length > 0 || this.#reqBody !== null) return;
    if (this.#closing || this.#clientEnded) this.#endClient();
  }

  #onUpGone(up: net.Socket): void {
    if (up !== this.#up || this.#dead) return;
    if (this.#resBody === 'close') {
      // The response that ends with the connection has ended.
      this.#completed();
      this.#endClient();
    } else if (this.#methods.length === 0 && this.#reqBody === null) {
      // The app closed an idle connection (its keep-alive timeout, a crash, or its stop after a deploy or
      // rollback switched to a new process). The client's stays open: its next request connects anew, to the
      // process current then. Ending it would race a request the client is sending at that very moment, which
      // it sees as a reset ("socket hang up"): a failed request at every switch (decision 128).
      if (this.#closing || this.#clientEnded) this.#endClient();
      else this.#dropUpstream();
    } else this.#upstreamFailed();
  }

  /** The app went away mid-request, or sent what cannot be framed: a 502 page when nothing was sent yet. */
  #upstreamFailed(): void {
    if (!this.#resStarted && this.#methods.length > 0 && this.#client.writable) {
      this.#client.end(BAD_GATEWAY);
      this.#finish(false);
    } else this.#finish();
  }

  #endClient(): void {
    this.#client.end();
    this.#finish(false);
  }

  /** Gives the connection (from the request in #pending on) to Pier's HTTP server. */
  #fallback(): void {
    const bytes = this.#pending;
    this.#pending = null;
    this.#client.pause();
    this.#detach();
    this.#dropUpstream();
    this.#toServer(this.#client, bytes);
  }

  #detach(): void {
    this.#dead = true;
    const c = this.#client;
    c.removeListener('data', this.#onClientData);
    c.removeListener('end', this.#onClientEnd);
    c.removeListener('error', this.#onClientGone);
    c.removeListener('close', this.#onClientGone);
    c.removeListener('timeout', this.#onTimeout);
    c.setTimeout(0);
    for (let n = this.#methods.length; n > 0 && this.#inst; n--) this.#inst.inflight--;
    this.#methods = [];
    this.#onDone(this);
  }

  #finish(destroyClient = true): void {
    if (this.#dead) return;
    this.#detach();
    this.#dropUpstream();
    if (destroyClient) this.#client.destroy();
    // An error after the end (a reset) must not be thrown as unhandled.
    this.#client.on('error', () => {});
  }
}
