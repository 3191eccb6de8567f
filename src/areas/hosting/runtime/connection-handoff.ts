import type { ChildProcess } from 'node:child_process';
import type http from 'node:http';
import type net from 'node:net';

// Connection hand-off, the router's side (docs/decisions/020-connection-handoff.md). Before Pier's HTTP server
// sees a new connection, the router reads its first request head; when the Host names a Node app that can take
// connections, the socket and the bytes read so far go to the app's process over IPC and the app answers the
// client itself, for as long as the connection lives. Anything else goes on to Pier's HTTP server (Pier's own
// routes, static sites, apps on the proxy path), which replays the bytes as if nothing had happened.

/** Node's default limit on a request head; a longer one goes to the HTTP server, which answers 431. */
const MAX_HEAD = 16 * 1024;
/** A client that sends no complete head in this time is left to the HTTP server's own timeouts. */
const PEEK_TIMEOUT_MS = 10_000;

const CRLF2 = Buffer.from('\r\n\r\n');

/**
 * The Host of a complete HTTP/1.x request head (up to and excluding the blank line), or null when the head
 * is not one to route by: not HTTP/1.x, no Host, or more than one (the HTTP server rejects those itself).
 */
export function headHost(head: string): string | null {
  const lineEnd = head.indexOf('\r\n');
  const requestLine = lineEnd < 0 ? head : head.slice(0, lineEnd);
  if (!/ HTTP\/1\.[01]$/.test(requestLine)) return null;
  let host: string | null = null;
  let at = lineEnd;
  while (at >= 0 && at < head.length) {
    const next = head.indexOf('\r\n', at + 2);
    const line = head.slice(at + 2, next < 0 ? head.length : next);
    at = next;
    if (line.length < 5 || (line.charCodeAt(0) | 0x20) !== 0x68) continue; // fast skip: not h/H
    const colon = line.indexOf(':');
    if (colon !== 4 || line.slice(0, 4).toLowerCase() !== 'host') continue;
    if (host !== null) return null;
    host = line.slice(5).trim();
  }
  return host || null;
}

/**
 * Decides what to do with a new connection once its first request head is read; true = taken. `toServer`
 * gives the connection to the HTTP server later, with the bytes read from it that the server must see.
 */
export type TakeConnection = (
  socket: net.Socket,
  head: Buffer,
  host: string,
  toServer: (socket: net.Socket, bytes: Buffer | null) => void,
) => boolean;

/**
 * Puts a first-request look in front of the server's connections: `take` sees each new connection's first
 * request head and may keep the socket; every other connection reaches the server with its bytes replayed.
 */
export function interceptConnections(server: http.Server, take: TakeConnection): void {
  const emit = server.emit as (this: http.Server, event: string, ...args: unknown[]) => boolean;
  const toServer = (socket: net.Socket, head: Buffer | null) => {
    if (head) socket.unshift(head);
    emit.call(server, 'connection', socket);
    // Reading the head paused the socket; the HTTP server does not resume a paused one by itself.
    socket.resume();
  };
  server.emit = function emitWithHandoff(this: http.Server, event: string, ...args: unknown[]) {
    if (event !== 'connection') return emit.call(this, event, ...args);
    const socket = args[0] as net.Socket;
    let head: Buffer | null = null;
    const done = () => {
      socket.removeListener('data', onData);
      socket.removeListener('error', onGone);
      socket.removeListener('end', onGone);
      socket.removeListener('timeout', onTimeout);
      socket.setTimeout(0);
      socket.pause();
      stopReading(socket);
    };
    const onTimeout = () => {
      done();
      toServer(socket, head);
    };
    const onGone = () => {
      done();
      socket.destroy();
    };
    const onData = (chunk: Buffer) => {
      head = head ? Buffer.concat([head, chunk]) : chunk;
      const end = head.indexOf(CRLF2);
      if (end < 0 && head.length < MAX_HEAD) return;
      done();
      const host = end < 0 ? null : headHost(head.toString('latin1', 0, end));
      let taken = false;
      try {
        taken = host !== null && take(socket, head, host, toServer);
      } catch {
        // Could not hand it over: the HTTP server serves it (proxy path).
      }
      if (!taken && !socket.destroyed) toServer(socket, head);
    };
    socket.on('data', onData);
    socket.on('error', onGone);
    socket.on('end', onGone);
    socket.setTimeout(PEEK_TIMEOUT_MS, onTimeout);
    return true;
  } as typeof server.emit;
}

/**
 * Stops reading from the kernel too. A paused stream still reads into its own buffer up to its high-water
 * mark, and bytes read into Pier's buffer do not travel with a handed-over handle: a body arriving while the
 * hand-off waits in the IPC queue would be cut short. resume() starts reading again (proxy path).
 */
function stopReading(socket: net.Socket): void {
  const handle = (socket as unknown as { _handle?: { reading?: boolean; readStop?: () => number } })._handle;
  if (!handle?.reading) return;
  handle.reading = false;
  handle.readStop?.();
}

type SendableSocket = net.Socket & { server: unknown; _handle: unknown };
/** Node's queue of handles waiting for the child's NODE_HANDLE_ACK of the one in flight (null: none in flight). */
type HandleQueue = { _handleQueue?: unknown[] | null };

/**
 * Sends the socket to the child with `message`; false (socket untouched) when it could not be sent. The socket
 * is detached from Pier's server first: Node would otherwise count it as a "worker" connection and have
 * server.close() wait for the app to close it.
 *
 * Nothing is sent while another handle to this child still waits for its acknowledgement: Node would queue the
 * message and convert the socket only on that acknowledgement, after we restored `server` and gave the socket
 * to the proxy path. The handle would then be taken from under the spliced connection, and Node would mark
 * Pier's server as using workers (net.Server#_setupWorker); once that app exits, server.close() waits for a
 * worker that no longer exists and never calls back (Pier's shutdown hung at app.close()).
 */
export function sendSocket(child: ChildProcess, socket: net.Socket, message: object): boolean {
  if (!child.connected || (child as ChildProcess & HandleQueue)._handleQueue) return false;
  const s = socket as SendableSocket;
  const server = s.server;
  s.server = null;
  child.send(message, socket, { keepOpen: false }, () => {
    // Errors after the hand-over (the app died meanwhile) leave nothing to do: the socket went with it.
  });
  if (s._handle) {
    s.server = server;
    return false;
  }
  // The handle now belongs to the message; destroying the emptied socket only settles the server's count.
  socket.destroy();
  return true;
}
