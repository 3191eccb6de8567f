'use strict';
// Preloaded into every Node process of a sandboxed app (NODE_OPTIONS=--require,
// docs/decisions/066-app-network-namespace.md).
// The app lives in its own network namespace: the TCP port it listens on (PORT) is on its own loopback, which
// Pier cannot reach. So when a server starts listening on PORT, this also accepts connections on the Unix
// socket PIER_APP_SOCKET (in the project's socket folder, bound into the sandbox) and hands each to that same
// server, as if it had arrived on PORT. The app's code is unchanged; Pier's proxy path connects to the socket.
// Plain CommonJS with no dependencies: it runs before the app's own code.

const fs = require('node:fs');
const net = require('node:net');

const socketPath = process.env.PIER_APP_SOCKET;
const port = Number(process.env.PORT);

if (socketPath && port > 0) {
  let bound = false;
  const listen = net.Server.prototype.listen;
  net.Server.prototype.listen = function pierNetListen(...args) {
    if (!bound) {
      this.once('listening', () => {
        const addr = this.address();
        if (bound || !addr || typeof addr !== 'object' || addr.port !== port) return;
        bound = true;
        const server = this;
        try {
          fs.unlinkSync(socketPath); // left by a previous process of this release
        } catch {}
        const side = net.createServer({ pauseOnConnect: false }, (sock) => server.emit('connection', sock));
        side.on('error', (e) => console.error(`pier: cannot listen on ${socketPath}: ${e.message}`));
        side.listen(socketPath);
        // Not what keeps the process alive: the app's own server does.
        side.unref();
        server.once('close', () => side.close());
      });
    }
    return listen.apply(this, args);
  };
}
