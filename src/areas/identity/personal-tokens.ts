import { and, eq, isNull } from 'drizzle-orm';
import { z } from 'zod';
import { credentials } from '../../core/auth/tables.ts';
import type { Deps } from '../../deps.ts';
import { identityErrors } from './errors.ts';

// The dashboard's token page: any signed-in user mints personal tokens with no form or approval, renames
// them, and revokes them by key id. A token is shown once; only its HMAC is stored.

export const label = z.string().trim().min(1).max(100);
export const keyIdInput = z.string().min(1).max(64);

export const tokenItem = z.object({
  keyId: z.string(),
  label: z.string(),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
  expiresAt: z.string().nullable(),
  /** True for the token making this call. */
  current: z.boolean(),
});

export async function ownToken(deps: Deps, userId: string, keyId: string) {
  const [row] = await deps.db.orm
    .select()
    .from(credentials)
    .where(
      and(
        eq(credentials.keyId, keyId),
        eq(credentials.kind, 'pk'),
        eq(credentials.userId, userId),
        isNull(credentials.revokedAt),
      ),
    );
  if (!row) throw identityErrors.credentialNotFound();
  return row;
}
