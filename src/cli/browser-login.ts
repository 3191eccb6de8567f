import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FnOutput, PierClient } from '../sdk/client.ts';
import { isPierApiError } from '../sdk/client.ts';
import type { CliEnv } from './env.ts';
import { CliError } from './errors.ts';
import type { Output } from './prompt.ts';

// `pier login` in a browser: PKCE (RFC 7636, S256) with a loopback callback (RFC 8252). The dashboard's
// approval page mints a code bound to the challenge and sends the browser back to the callback with it;
// only this process knows the verifier, so a code caught on the way is useless to anyone else.

export const LOGIN_TIMEOUT_MS = 5 * 60 * 1000;

export type Exchange = FnOutput<'exchangeCliAuthCode'>;

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = crypto.randomBytes(48).toString('base64url'); // 64 characters, within 43–128
  const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
  return { verifier, challenge };
}

export function loginPageUrl(
  base: string,
  p: { challenge: string; state: string; callback: string; device: string },
): string {
  const q = new URLSearchParams({
    challenge: p.challenge,
    state: p.state,
    callback: p.callback,
    device: p.device,
  });
  return `${base}/cli/login?${q}`;
}

/** Opens a URL: PIER_BROWSER (run through sh with the URL as "$1"), else the desktop's opener. */
export function openBrowser(env: CliEnv, url: string): void {
  const [cmd, args] = env.browser
    ? env.platform === 'win32'
      ? ['cmd', ['/d', '/s', '/c', `${env.browser} "${url}"`]]
      : ['sh', ['-c', `${env.browser} "$1"`, 'pier-browser', url]]
    : env.platform === 'darwin'
      ? ['open', [url]]
      : env.platform === 'win32'
        ? ['rundll32', ['url.dll,FileProtocolHandler', url]]
        : ['xdg-open', [url]];
  try {
    const child = spawn(cmd, args as string[], { stdio: 'ignore', detached: true });
    child.on('error', () => {}); // the URL is printed too; a missing opener is not fatal
    child.unref();
  } catch {
    // same: the person can open the printed URL
  }
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string, text: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font:16px system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}</style>
</head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body></html>`;
}

export type BrowserLoginOptions = {
  env: CliEnv;
  client: PierClient;
  stderr: Output;
  timeoutMs?: number;
};

/** Runs the whole browser flow and resolves with the redeemed token, or rejects with a CliError/PierApiError. */
export async function browserLogin(o: BrowserLoginOptions): Promise<Exchange> {
  const { verifier, challenge } = pkcePair();
  const state = crypto.randomBytes(16).toString('base64url');
  let settle: { resolve: (v: Exchange) => void; reject: (e: unknown) => void } | undefined;
  const done = new Promise<Exchange>((resolve, reject) => {
    settle = { resolve, reject };
  });
  let redeeming = false;

  const server = http.createServer((req, res) => {
    const reqUrl = new URL(req.url ?? '/', 'http://127.0.0.1');
    const send = (status: number, title: string, text: string) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(page(title, text));
    };
    if (req.method !== 'GET' || reqUrl.pathname !== '/callback')
      return send(404, 'Not found', 'Nothing here.');
    const q = reqUrl.searchParams;
    // Someone else's redirect (or a forged one) must not end this login: answer it and keep waiting.
    if (q.get('state') !== state)
      return send(
        400,
        'Login not matched',
        'This approval belongs to another pier login; this one is still waiting.',
      );
    const denied = q.get('error');
    if (denied) {
      send(400, 'Login cancelled', 'The login was not approved. You can close this tab.');
      return settle?.reject(
        new CliError('LOGIN_DENIED', `The login was not approved (${denied.slice(0, 100)}).`),
      );
    }
    const code = q.get('code');
    if (!code)
      return send(
        400,
        'Login not finished',
        'The approval carried no code; this pier login is still waiting.',
      );
    if (redeeming) return send(409, 'Already in progress', 'This login is being finished already.');
    redeeming = true;
    o.client.call('exchangeCliAuthCode', { code, codeVerifier: verifier }).then(
      (result) => {
        send(200, 'Pier CLI logged in', `Logged in as ${result.user.email}. You can close this tab.`);
        settle?.resolve(result);
      },
      (err: unknown) => {
        const why = isPierApiError(err) ? `${err.code}: ${err.message}` : 'the code could not be redeemed';
        send(400, 'Login failed', `${why} Run pier login again.`);
        settle?.reject(err);
      },
    );
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = loginPageUrl(o.client.baseUrl, {
    challenge,
    state,
    callback: `http://127.0.0.1:${port}/callback`,
    device: o.env.hostname,
  });
  o.stderr.write(`Approve this login in your browser. If it does not open, visit:\n  ${url}\n`);
  openBrowser(o.env, url);

  const timeoutMs = o.timeoutMs ?? LOGIN_TIMEOUT_MS;
  const timer = setTimeout(
    () =>
      settle?.reject(
        new CliError(
          'LOGIN_TIMEOUT',
          `No approval arrived within ${Math.round(timeoutMs / 1000)} s; run pier login again.`,
        ),
      ),
    timeoutMs,
  );
  try {
    return await done;
  } finally {
    clearTimeout(timer);
    // Let the last page reach the browser, then stop listening.
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), 1000).unref();
    });
  }
}
