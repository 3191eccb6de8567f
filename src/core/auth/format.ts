import type { CredentialKind } from './tables.ts';

// `<kind>.<keyId>.<secret>`: keyId is base62, the secret 32 random bytes in base64url (no dots in either).
const PATTERN = /^(pk|plat|op|sk_live|sk_test|mcpat)\.([A-Za-z0-9]{8,64})\.([A-Za-z0-9_-]{32,128})$/;

export type ParsedCredential = { kind: CredentialKind; keyId: string; secret: string };

export function parseCredential(value: string): ParsedCredential | null {
  const m = PATTERN.exec(value);
  if (!m) return null;
  return { kind: m[1] as CredentialKind, keyId: m[2]!, secret: m[3]! };
}

export function formatCredential(kind: CredentialKind, keyId: string, secret: string): string {
  return `${kind}.${keyId}.${secret}`;
}

export function bearerFrom(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}
