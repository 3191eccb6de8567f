import { desc, eq } from 'drizzle-orm';
import { z } from 'zod';
import { audit } from '../../core/audit/audit.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { KEEP } from './provider-webhook-tokens.ts';
import { integrationProviderWebhookTokens as tokens } from './tables.ts';

// `pier admin integrations webhook-tokens`: the operator (and only the operator) reads the verification
// tokens providers sent to their webhook URL (provider-webhook-tokens.ts). Each read is audited.

export const adminListProviderWebhookTokens = defineFn({
  name: 'adminListProviderWebhookTokens',
  summary: "Verification tokens providers sent to their webhook URL (Notion's), newest first, decrypted.",
  auth: { kind: 'operator' },
  input: z.strictObject({ connector: z.string().trim().min(1).max(64).optional() }),
  output: z.object({
    items: z.array(z.object({ connector: z.string(), token: z.string(), receivedAt: z.string() })),
  }),
  errors: [],
  handler: async ({ deps, caller }, input) => {
    const rows = await deps.db.orm
      .select()
      .from(tokens)
      .where(input.connector ? eq(tokens.connectorSlug, input.connector) : undefined)
      .orderBy(desc(tokens.id))
      .limit(KEEP * 5);
    await audit(deps, { kind: 'operator', id: caller.keyId }, 'integrations.webhook_tokens.read', null, {
      connector: input.connector ?? null,
      count: rows.length,
    });
    return {
      items: rows.map((r) => ({
        connector: r.connectorSlug,
        token: deps.keyring.decrypt(r.tokenEnc),
        receivedAt: r.receivedAt.toISOString(),
      })),
    };
  },
});
