import { openSession } from './connection-sessions.ts';
import type { IntegrationDeps, Scope } from './connection-tokens.ts';
import { findConnection } from './connections.ts';
import { integrationsErrors } from './errors.ts';

// Passthrough: a raw call to the connection's provider. The path is appended to the connector's API base
// (its base path included, e.g. Slack's `/api`) and can never leave that host; the caller's hop-by-hop and
// auth headers are dropped (Pier injects the connection's token); the answer comes back as is: the
// provider's status, the headers that describe the body, and the body's bytes.

const DROPPED = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'content-length',
  'proxy-connection',
]);
const RETURNED = ['content-type', 'etag', 'last-modified', 'location', 'retry-after', 'link', 'x-request-id'];

/** Refuses any path that could reach past the API base: schemes, `//host`, `..`, backslashes, encoded dots. */
export function checkPath(path: string): string {
  const p = path.startsWith('/') ? path : `/${path}`;
  let decoded: string;
  try {
    decoded = decodeURIComponent(p);
  } catch {
    throw integrationsErrors.passthroughPathInvalid();
  }
  if (
    /^[a-z][a-z0-9+.-]*:/i.test(path) ||
    p.startsWith('//') ||
    /[\\?#]/.test(p) ||
    decoded.split('/').some((seg) => seg === '..' || seg === '.') ||
    [...decoded].some((ch) => ch.charCodeAt(0) < 32 || ch.charCodeAt(0) === 127)
  ) {
    throw integrationsErrors.passthroughPathInvalid();
  }
  return p;
}

export async function passthrough(
  d: IntegrationDeps,
  s: Scope,
  input: {
    connectionId: string;
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
    path: string;
    query?: Record<string, string | number | boolean>;
    body?: unknown;
    headers?: Record<string, string>;
  },
): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
  const path = checkPath(input.path);
  const row = await findConnection(d, s, input.connectionId, { cached: true });
  const { call } = await openSession(d, row, { raw: true });
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(input.headers ?? {}))
    if (!DROPPED.has(k.toLowerCase())) headers[k.toLowerCase()] = v;
  const res = await call({
    method: input.method,
    path,
    query: input.query,
    ...(input.body !== undefined && input.method !== 'GET' ? { json: input.body } : {}),
    headers,
  });
  const out: Record<string, string> = {};
  for (const h of RETURNED) {
    const v = res.headers.get(h);
    if (v !== null) out[h] = v;
  }
  return { status: res.status, headers: out, body: res.body };
}
