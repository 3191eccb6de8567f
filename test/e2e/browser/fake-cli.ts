// A small real process that behaves like `pier login`'s browser flow (used while src/cli is not on main):
// PKCE verifier + S256 challenge, a loopback callback server, then exchangeCliAuthCode with the verifier.
// Prints one JSON line with the approval URL, then one with the result.
import crypto from 'node:crypto';
import http from 'node:http';
import os from 'node:os';

const base = process.argv[2]!;
const device = process.argv[3] ?? os.hostname();
const verifier = crypto.randomBytes(32).toString('base64url');
const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
const state = crypto.randomBytes(16).toString('base64url');

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (url.pathname !== '/callback') {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end('<!doctype html><title>pier login</title><h1>Signed in. You can close this tab.</h1>');
  server.close();
  if (url.searchParams.get('state') !== state) {
    console.log(JSON.stringify({ error: 'state mismatch' }));
    process.exit(1);
  }
  const code = url.searchParams.get('code');
  if (!code) {
    console.log(JSON.stringify({ error: url.searchParams.get('error') ?? 'no code' }));
    process.exit(1);
  }
  const r = await fetch(`${base}/api/fn/exchangeCliAuthCode`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code, codeVerifier: verifier }),
  });
  console.log(JSON.stringify({ status: r.status, body: await r.json() }));
  process.exit(r.ok ? 0 : 1);
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  const q = new URLSearchParams({
    challenge,
    state,
    callback: `http://127.0.0.1:${port}/callback`,
    device,
  });
  console.log(JSON.stringify({ url: `${base}/cli/login?${q}` }));
});
