import crypto from 'node:crypto';
import type { Deps } from '../../deps.ts';
import { loginCodes } from './account-tables.ts';

// 20 consonants without vowels or look-alikes: no words, no 0/O or 1/I confusion.
const ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const LOGIN_CODE_TTL_MS = 5 * 60 * 1000;

export function normalizeCode(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, '');
}

export function formatCode(raw: string): string {
  return `${raw.slice(0, 4)}-${raw.slice(4)}`;
}

function randomCode(): string {
  let out = '';
  while (out.length < 8) {
    for (const b of crypto.randomBytes(16)) if (b < 240 && out.length < 8) out += ALPHABET[b % 20];
  }
  return out;
}

export function pkceChallenge(verifier: string): string {
  return crypto.createHash('sha256').update(verifier).digest('base64url');
}

/** Mints a single-use login code for a user (hand-off card, operator, or the CLI's PKCE browser flow). */
export async function mintLoginCode(
  deps: Deps,
  input: { userId: string; label: string; codeChallenge?: string; meta?: Record<string, unknown> },
): Promise<{ code: string; expiresAt: Date }> {
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + LOGIN_CODE_TTL_MS);
  for (;;) {
    const raw = randomCode();
    const inserted = await deps.db.orm
      .insert(loginCodes)
      .values({
        codeHash: deps.keyring.hashSecret(raw),
        userId: input.userId,
        label: input.label,
        codeChallenge: input.codeChallenge,
        meta: input.meta ?? {},
        createdAt: now,
        expiresAt,
      })
      .onConflictDoNothing()
      .returning({ id: loginCodes.id });
    if (inserted.length) return { code: formatCode(raw), expiresAt };
  }
}

const LOOPBACK_CALLBACK_RE = /^http:\/\/(127\.0\.0\.1|localhost|\[::1\]):\d{1,5}\//;

export function isLoopbackCallback(url: string): boolean {
  return LOOPBACK_CALLBACK_RE.test(url);
}
