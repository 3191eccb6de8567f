import crypto from 'node:crypto';
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { cdnWebhookSecrets } from './tables.ts';

// Merge completion webhooks are signed (Standard Webhooks) with one secret per organization, encrypted at
// rest, made on first use. Owners and admins read it to verify deliveries and rotate it if it leaks.

export function newSecret(): string {
  return `whsec_${crypto.randomBytes(24).toString('base64')}`;
}

export async function webhookSecretOf(deps: Deps, orgId: string): Promise<string> {
  const [row] = await deps.db.orm.select().from(cdnWebhookSecrets).where(eq(cdnWebhookSecrets.orgId, orgId));
  if (row) return deps.keyring.decrypt(row.secretEnc);
  const secret = newSecret();
  await deps.db.orm
    .insert(cdnWebhookSecrets)
    .values({ orgId, secretEnc: deps.keyring.encrypt(secret), createdAt: deps.clock.now() })
    .onConflictDoNothing();
  // Two first uses at once: whichever insert won is the secret.
  const [won] = await deps.db.orm.select().from(cdnWebhookSecrets).where(eq(cdnWebhookSecrets.orgId, orgId));
  return deps.keyring.decrypt(won!.secretEnc);
}

export const output = z.object({ orgSlug: z.string(), secret: z.string() });
