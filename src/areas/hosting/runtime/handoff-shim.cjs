'use strict';
// Preloaded into a Node app's process (`node --require handoff-shim.cjs <file>`) when Pier's router hands
// client connections to the app instead of proxying each request (docs/decisions/020-connection-handoff.md).
// Pier sends a client's TCP socket over the IPC channel together with the bytes it already read; the shim
// replays them into the app's own http.Server, so the app answers the client directly. Each request on such a
// connection gets X-Forwarded-* set here (the router no longer sees it), and a request whose Host is not this
// app's hostname answers 421 and closes: a keep-alive connection must never reach another tenant's app.
// Plain CommonJS with no dependencies: it runs before the app's own code, in the app's process.

const http = require('node:http');
const net = require('node:net');

const kPier = Symbol('pier.handoff');

/** The project slug an app hostname names, or null; the same rules as appSlugFromHost in host-router.ts. */
function appSlugFromHost(host, appsDomain) {
  if (!host) return null;
  let h = host.toLowerCase();
  let domain = appsDomain.toLowerCase();
  if (!domain.includes(':')) h = h.replace(/:\d+$/, '');
  else if (!h.includes(':')) domain = domain.replace(/:\d+$/, '');
  if (!h.endsWith(`.${domain}`)) return null;
  const slug = h.slice(0, -domain.length - 1);
  return /^[a-z0-9-]{1,63}$/.test(slug) ? slug : null;
}

/** Whether a request with this Host header belongs on a connection handed over for `slug`. */
function hostMatches(host, slug, appsDomain) {
  return typeof host === 'string' && appSlugFromHost(host, appsDomain) === slug;
}

/** hostMatches for a connection, remembering the last Host that matched (clients repeat it every request). */
function connectionHostMatches(info, host) {
  if (host === info.lastHost && host !== undefined) return true;
  if (!hostMatches(host, info.slug, info.domain)) return false;
  info.lastHost = host;
  return true;
}

/**
 * Sets X-Forwarded-For/-Proto/-Host on a request of a handed-over connection, as the proxy path does: a
 * client's X-Forwarded-For is kept and the peer address appended; its -Proto and -Host are replaced.
 * Node has already built req.headers by the time a request is emitted, so both views are updated.
 */
function setForwarded(req, info) {
  const raw = req.rawHeaders;
  const out = [];
  let xff = '';
  let host = '';
  for (let i = 0; i < raw.length; i += 2) {
    const k = raw[i].toLowerCase();
    if (k === 'x-forwarded-for') {
      xff = xff ? `${xff}, ${raw[i + 1]}` : raw[i + 1];
      continue;
    }
    if (k === 'x-forwarded-proto' || k === 'x-forwarded-host') continue;
    if (k === 'host') host = raw[i + 1];
    out.push(raw[i], raw[i + 1]);
  }
  const ip = req.socket.remoteAddress || '';
  const forwardedFor = xff ? `${xff}, ${ip}` : ip;
  out.push('x-forwarded-for', forwardedFor, 'x-forwarded-proto', info.proto, 'x-forwarded-host', host);
  req.rawHeaders = out;
  const h = req.headers;
  h['x-forwarded-for'] = forwardedFor;
  h['x-forwarded-proto'] = info.proto;
  h['x-forwarded-host'] = host;
}

const MISDIRECTED = 'This connection belongs to another hostname; open a new connection for this one.\n';

/** Answers 421 on a server response and closes the connection after it. */
function misdirected(res) {
  res.shouldKeepAlive = false;
  res.writeHead(421, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(MISDIRECTED),
    'cache-control': 'no-store',
    connection: 'close',
  });
  res.end(MISDIRECTED);
}

/**
 * Wraps a server's emit so every request of a handed-over connection is checked and given X-Forwarded-*
 * before any of the app's listeners (added before or after) sees it. Returns the state the shim drives.
 */
function instrument(server) {
  const state = { draining: false };
  const emit = server.emit;
  server.emit = function pierEmit(event, a, b) {
    if (event === 'request' || event === 'checkContinue' || event === 'checkExpectation') {
      const info = a.socket?.[kPier];
      if (info) {
        // After a 421 the connection is closing; requests pipelined behind it reach no one.
        if (info.refused) return true;
        if (!connectionHostMatches(info, a.headers.host)) {
          info.refused = true;
          misdirected(b);
          return true;
        }
        setForwarded(a, info);
        // Retiring: finish this request and close, so the client reconnects to the new version.
        if (state.draining) b.shouldKeepAlive = false;
      }
    } else if (event === 'upgrade') {
      const info = b?.[kPier];
      if (info) {
        if (info.refused) {
          b.end();
          return true;
        }
        if (!connectionHostMatches(info, a.headers.host)) {
          info.refused = true;
          b.end(
            `HTTP/1.1 421 Misdirected Request\r\nconnection: close\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(MISDIRECTED)}\r\n\r\n${MISDIRECTED}`,
          );
          return true;
        }
        setForwarded(a, info);
      }
    }
    // biome-ignore lint/complexity/noArguments: passes every argument on unchanged, without a rest array per event
    return emit.apply(this, arguments);
  };
  return state;
}

module.exports = { appSlugFromHost, hostMatches, setForwarded, instrument, kPier };

// Only when Pier preloaded it (`--require <this file>` with an IPC channel), not when a test requires it. It
// takes itself out of execArgv so processes the app forks do not load it too.
const preloadAt = process.execArgv.findIndex(
  (a, i) => a === __filename && process.execArgv[i - 1] === '--require',
);
if (preloadAt > 0 && typeof process.send === 'function') {
  process.execArgv.splice(preloadAt - 1, 2);
  const port = Number(process.env.PORT);
  let server = null;
  let state = null;
  let open = 0;
  let drainAsked = false;

  const reportDrained = () => {
    if (drainAsked && open === 0 && process.connected) process.send({ pier: 'drained' });
  };

  // Find the app's own server: the http.Server that ends up listening on PORT.
  const listen = net.Server.prototype.listen;
  net.Server.prototype.listen = function pierListen(...args) {
    if (!server && this instanceof http.Server) {
      this.once('listening', () => {
        const addr = this.address();
        if (server || !addr || typeof addr !== 'object' || addr.port !== port) return;
        server = this;
        state = instrument(this);
        if (process.connected) process.send({ pier: 'ready' });
      });
    }
    return listen.apply(this, args);
  };

  process.on('message', (msg, socket) => {
    if (!msg || typeof msg !== 'object') return;
    if (msg.pier === 'conn' && socket) {
      if (!server) {
        socket.destroy();
        return;
      }
      socket[kPier] = { slug: msg.slug, domain: msg.domain, proto: msg.proto };
      open++;
      socket.once('close', () => {
        open--;
        reportDrained();
      });
      if (msg.head) socket.unshift(Buffer.from(msg.head, 'latin1'));
      server.emit('connection', socket);
      // The router paused the socket while it read the first request; Node's server does not resume it.
      socket.resume();
    } else if (msg.pier === 'drain') {
      drainAsked = true;
      if (state) state.draining = true;
      reportDrained();
    }
  });
  // The channel alone must not keep the app alive (an app that closes its server on SIGTERM should exit).
  process.channel?.unref();
}
