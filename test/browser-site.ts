import http from 'node:http';
import type { AddressInfo } from 'node:net';

// Local sites for the Chromium tests. `site` is the page a user asks for (on 127.0.0.2, which the tests open
// with OUTBOUND_ALLOW=127.0.0.2/32); `trap` listens on 127.0.0.1 and [::1], which stay closed, and counts
// every hit it gets: a guard that works leaves it at zero.

export type Served = { url: string; port: number; close: () => Promise<void> };

export type Trap = { port: number; hits: string[]; close: () => Promise<void> };

export async function listen(handler: http.RequestListener, host: string, port = 0): Promise<Served> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const p = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${p}`,
    port: p,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export async function startTrap(): Promise<Trap> {
  const hits: string[] = [];
  const count: http.RequestListener = (req, res) => {
    hits.push(`${req.socket.localAddress} ${req.url}`);
    res.end('reached');
  };
  const v4 = await listen(count, '127.0.0.1');
  const v6 = await listen(count, '::1', v4.port).catch(() => null);
  // A WebSocket upgrade is a hit too.
  return {
    port: v4.port,
    hits,
    close: async () => {
      await v4.close();
      await v6?.close();
    },
  };
}

const html = (body: string, head = '') =>
  `<!doctype html><html><head><meta charset="utf-8">${head}</head><body>${body}</body></html>`;

const STYLED = `<style>
  body { margin: 0; background: #ffffff; color: #000; }
  @media (prefers-color-scheme: dark) { body { background: #111111; color: #eee; } }
  #box { width: 200px; height: 100px; background: #00aa00; margin: 40px; }
  #tall { height: 2400px; }
</style>`;

/** The page site's routes; `trapPort` is where the private-address sub-requests aim. */
export function siteHandler(trapPort: number, stats = { adHits: 0 }): http.RequestListener {
  const t = trapPort;
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname.startsWith('/ads/')) {
      stats.adHits++;
      res.writeHead(200, { 'content-type': 'image/svg+xml' });
      return res.end(
        '<svg xmlns="http://www.w3.org/2000/svg" width="300" height="250"><rect width="300" height="250" fill="#ff0000"/></svg>',
      );
    }
    const send = (status: number, body: string | Buffer, type = 'text/html; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    switch (url.pathname) {
      case '/':
        return send(200, html('<h1 id="title">Hello</h1><p>A plain page.</p>', '<title>Home</title>'));
      case '/ssrf':
        return send(
          200,
          html(
            `<img src="http://127.0.0.1:${t}/img-v4">
             <img src="http://[::1]:${t}/img-v6">
             <img src="http://[::ffff:127.0.0.1]:${t}/img-mapped">
             <img src="http://[::ffff:7f00:1]:${t}/img-mapped-hex">
             <img src="http://localhost:${t}/img-localhost">
             <img src="http://2130706433:${t}/img-decimal">
             <img src="http://10.0.0.1/ten">
             <img src="http://172.16.0.1/172">
             <img src="http://192.168.0.1/192">
             <img src="http://169.254.169.254/latest/meta-data/">
             <img src="/redirect-to-trap">
             <link rel="stylesheet" href="http://127.0.0.1:${t}/css">
             <link rel="preconnect" href="http://127.0.0.1:${t}">
             <iframe src="http://127.0.0.1:${t}/frame"></iframe>
             <iframe src="/frame-redirect"></iframe>
             <script>
               const done = [];
               const mark = () => { if (done.length === 4) document.body.dataset.done = '1'; };
               fetch('http://127.0.0.1:${t}/fetch').catch(() => {}).finally(() => { done.push(1); mark(); });
               fetch('http://[::1]:${t}/fetch6').catch(() => {}).finally(() => { done.push(1); mark(); });
               fetch('http://169.254.169.254/latest/meta-data/').catch(() => {}).finally(() => { done.push(1); mark(); });
               const ws = new WebSocket('ws://127.0.0.1:${t}/ws');
               ws.onerror = ws.onclose = () => { if (!ws.seen) { ws.seen = 1; done.push(1); mark(); } };
               navigator.sendBeacon('http://127.0.0.1:${t}/beacon', 'x');
             </script>`,
          ),
        );
      case '/redirect-to-trap':
        res.writeHead(302, { location: `http://127.0.0.1:${t}/landing` });
        return res.end();
      case '/frame-redirect':
        res.writeHead(302, { location: `http://[::1]:${t}/frame-landing` });
        return res.end();
      case '/hop':
        res.writeHead(302, { location: '/final' });
        return res.end();
      case '/final':
        return send(200, html('<h1 id="final">Final</h1><img src="rel.png">'));
      case '/js':
        return send(
          200,
          html(
            '<div id="app">loading</div><script>setTimeout(() => { document.getElementById("app").innerHTML = "<article id=ready>Rendered by script</article>"; }, 150);</script>',
          ),
        );
      case '/styled':
        return send(200, html('<div id="box"></div><div id="tall"></div>', STYLED));
      case '/ad':
        return send(
          200,
          html(
            '<img src="/ads/banner.svg" style="position:absolute;top:0;left:0;width:300px;height:250px">',
            STYLED,
          ),
        );
      case '/banner':
        // HubSpot's consent banner, one of the consent managers autoconsent's rules know.
        return send(
          200,
          html(
            `<div id="hs-eu-cookie-confirmation" style="position:fixed;left:0;right:0;bottom:0;height:200px;background:#0000ff">
               <p>We use cookies.</p>
               <button id="hs-eu-confirmation-button" onclick="this.parentNode.remove()">Accept</button>
               <button id="hs-eu-decline-button" onclick="this.parentNode.remove()">Decline</button>
             </div>`,
            STYLED,
          ),
        );
      case '/late':
        // Painted dark by a script after load; only waitForSelector sees it.
        return send(
          200,
          html(
            '<script>window.addEventListener("load", () => setTimeout(() => { document.body.style.background = "#000"; document.body.insertAdjacentHTML("beforeend", "<i id=ready></i>"); }, 400));</script>',
            STYLED,
          ),
        );
      case '/missing':
        return send(404, html('<h1>Not here</h1>'));
      default:
        return send(404, html('<h1>Not found</h1>'));
    }
  };
}
