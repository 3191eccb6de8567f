import { Readable } from 'node:stream';
import { z } from 'zod';
import { openSession } from './connection-sessions.ts';
import type { IntegrationDeps, Scope } from './connection-tokens.ts';
import { findConnection } from './connections.ts';
import { connectorBySlug } from './connectors/index.ts';
import type { FileStream } from './connectors/types.ts';
import { integrationsErrors } from './errors.ts';

// Storage downloads as a short-lived signed URL on Pier, beside the contract's base64 answer: the URL names
// the connection, its tenant and the file, signed with the keyring, and streams the provider's bytes to
// whoever holds it without reading the whole file into memory (a 30 MB file is not 42 MB of base64 JSON).

export const DOWNLOAD_URL_DEFAULT_TTL_SEC = 300;
export const DOWNLOAD_URL_MAX_TTL_SEC = 3600;

const claims = z.object({
  c: z.string(),
  o: z.string(),
  e: z.enum(['production', 'sandbox']),
  f: z.string(),
  x: z.number().int(),
});
type Claims = z.infer<typeof claims>;

const SIGN_PREFIX = 'integrations-download:';

export async function createDownloadUrl(
  d: IntegrationDeps,
  s: Scope,
  q: { connectionId: string; fileId: string; expiresIn?: number },
): Promise<{ url: string; expiresAt: string }> {
  const row = await findConnection(d, s, q.connectionId, { cached: true });
  if (!connectorBySlug(row.connectorSlug)?.storage)
    throw integrationsErrors.operationNotSupported(row.connectorSlug, 'storage');
  if (row.status !== 'connected')
    throw integrationsErrors.connectionNotConnected(row.status, row.statusReason);
  const ttl = q.expiresIn ?? DOWNLOAD_URL_DEFAULT_TTL_SEC;
  const x = Math.floor(d.clock.now().getTime() / 1000) + ttl;
  const body: Claims = { c: row.id, o: s.orgId, e: s.environment, f: q.fileId, x };
  const payload = Buffer.from(JSON.stringify(body)).toString('base64url');
  const token = `${payload}.${d.keyring.sign(SIGN_PREFIX + payload)}`;
  return {
    url: `${d.config.publicUrl.replace(/\/+$/, '')}/v1/integrations/downloads/${token}`,
    expiresAt: new Date(x * 1000).toISOString(),
  };
}

/** The file behind a signed download URL, as a stream; a bad or expired signature is DOWNLOAD_URL_INVALID. */
export async function openDownload(d: IntegrationDeps, token: string): Promise<FileStream> {
  const [payload, sig] = token.split('.');
  if (!payload || !sig || !d.keyring.verify(SIGN_PREFIX + payload, sig))
    throw integrationsErrors.downloadUrlInvalid('its signature does not match');
  let c: Claims;
  try {
    c = claims.parse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
  } catch {
    throw integrationsErrors.downloadUrlInvalid('it is malformed');
  }
  if (c.x * 1000 <= d.clock.now().getTime()) throw integrationsErrors.downloadUrlInvalid('it has expired');
  const row = await findConnection(d, { orgId: c.o, environment: c.e }, c.c);
  const { call, connector } = await openSession(d, row);
  const ops = connector.storage;
  if (!ops) throw integrationsErrors.operationNotSupported(row.connectorSlug, 'storage');
  if (ops.openFile) return ops.openFile(call, c.f);
  const f = await ops.downloadFile(call, c.f);
  return { stream: Readable.from([f.data]), mimeType: f.mimeType, filename: f.filename, size: f.data.length };
}
