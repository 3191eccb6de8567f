import crypto from 'node:crypto';
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { MANAGERS, orgForUser, requireRole, slugInput } from '../orgs/index.ts';
import { cdnWebhookSecrets } from './tables.ts';

// Merge completion webhooks are signed (Standard Webhooks) with one secret per organization, encrypted at
// rest, made on first use. Owners and admins read it to verify deliveries and rotate it if it leaks.

function newSecret(): string {
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

const output = z.object({ orgSlug: z.string(), secret: z.string() });

export const getWebhookSecretForCli = defineFn({
  name: 'getWebhookSecretForCli',
  minRole: 'manager',
  summary: "The organization's webhook signing secret (owner or admin), for verifying CDN merge webhooks.",
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput }),
  output,
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, { orgSlug }) => {
    const { org, role } = await orgForUser(deps, caller.userId, orgSlug);
    requireRole(role, MANAGERS);
    return { orgSlug: org.slug, secret: await webhookSecretOf(deps, org.id) };
  },
});

export const rotateWebhookSecretForCli = defineFn({
  name: 'rotateWebhookSecretForCli',
  minRole: 'manager',
  summary: "Replaces the organization's webhook signing secret (owner or admin); returns the new one.",
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput }),
  output,
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, { orgSlug }) => {
    const { org, role } = await orgForUser(deps, caller.userId, orgSlug);
    requireRole(role, MANAGERS);
    const secret = newSecret();
    const now = deps.clock.now();
    await deps.db.orm
      .insert(cdnWebhookSecrets)
      .values({ orgId: org.id, secretEnc: deps.keyring.encrypt(secret), createdAt: now, rotatedAt: now })
      .onConflictDoUpdate({
        target: cdnWebhookSecrets.orgId,
        set: { secretEnc: deps.keyring.encrypt(secret), rotatedAt: now },
      });
    return { orgSlug: org.slug, secret };
  },
});
