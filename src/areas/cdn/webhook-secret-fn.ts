import { z } from 'zod';
import { defineFn } from '../../http/fn-kit.ts';
import { MANAGERS, orgForUser, requireRole, slugInput } from '../orgs/index.ts';
import { cdnWebhookSecrets } from './tables.ts';
import { newSecret, output, webhookSecretOf } from './webhook-secret.ts';

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
