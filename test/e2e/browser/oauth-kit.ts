import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

// The parts around Pier that the OAuth flow needs: an https server for a Client ID Metadata Document (its
// certificate trusted by this process, where Pier runs), the client's redirect target, an in-memory
// OAuthClientProvider for the MCP SDK, and a fetch that records what the SDK asked for.

function listen(server: net.Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(String((server.address() as net.AddressInfo).port))),
  );
}

/** A self-signed certificate for 127.0.0.1, trusted by every TLS client of this process from now on. */
export function trustedLoopbackCert(): { key: string; cert: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-oauth-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    const key = fs.readFileSync(path.join(dir, 'key.pem'), 'utf8');
    const cert = fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8');
    tls.setDefaultCACertificates([...tls.getCACertificates('default'), cert]);
    return { key, cert };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Serves JSON documents over https on 127.0.0.1; `set` puts one at a path. */
export async function startDocServer(tlsPair: { key: string; cert: string }) {
  const docs = new Map<string, unknown>();
  let fetches = 0;
  const server = https.createServer(tlsPair, (req, res) => {
    const doc = docs.get(req.url ?? '');
    fetches++;
    if (!doc) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
  });
  const base = `https://127.0.0.1:${await listen(server)}`;
  return {
    base,
    set: (p: string, doc: unknown) => docs.set(p, doc),
    fetches: () => fetches,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** The client's redirect URI: resolves each arrival with its full URL. */
export async function startCallbackServer() {
  const waiters: ((u: URL) => void)[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('You can close this tab.');
    waiters.shift()?.(url);
  });
  const base = `http://127.0.0.1:${await listen(server)}`;
  return {
    redirectUri: `${base}/callback`,
    next: () => new Promise<URL>((r) => waiters.push(r)),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A fetch for the MCP SDK that notes each request it makes ("METHOD path -> status"), in order. */
export function recordingFetch() {
  const seen: string[] = [];
  const fetchFn = async (input: string | URL | Request, init?: RequestInit) => {
    const res = await fetch(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    seen.push(
      `${init?.method ?? (input instanceof Request ? input.method : 'GET')} ${url.pathname} -> ${res.status}`,
    );
    return res;
  };
  return { fetch: fetchFn, seen };
}

/** An OAuthClientProvider that keeps everything in memory and hands the authorization URL to the test. */
export class MemoryProvider implements OAuthClientProvider {
  clientMetadataUrl?: string;
  #info?: OAuthClientInformationMixed;
  #tokens?: OAuthTokens;
  #verifier = '';
  authorizationUrl?: URL;
  readonly #metadata: OAuthClientMetadata;
  readonly #redirect: string;
  constructor(redirectUri: string, metadata: Partial<OAuthClientMetadata>, clientMetadataUrl?: string) {
    this.#redirect = redirectUri;
    this.clientMetadataUrl = clientMetadataUrl;
    this.#metadata = {
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...metadata,
    };
  }
  get redirectUrl() {
    return this.#redirect;
  }
  get clientMetadata() {
    return this.#metadata;
  }
  state() {
    return 'sdk-state-1';
  }
  clientInformation() {
    return this.#info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.#info = info;
  }
  tokens() {
    return this.#tokens;
  }
  saveTokens(tokens: OAuthTokens) {
    this.#tokens = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.#verifier = v;
  }
  codeVerifier() {
    return this.#verifier;
  }
  /** Called by the SDK when the server refuses what it holds (a dead refresh token: 'tokens'). */
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (scope === 'all' || scope === 'client') this.#info = undefined;
    if (scope === 'all' || scope === 'tokens') this.#tokens = undefined;
    if (scope === 'all' || scope === 'verifier') this.#verifier = '';
  }
}
