import { desc, eq, inArray } from 'drizzle-orm';
import type { IntegrationDeps } from './connection-tokens.ts';
import { integrationProviderWebhookTokens as tokens } from './tables.ts';

// A provider's unsigned verification token (Notion's `verification_token`) becomes the secret that signs
// every later webhook, so it never goes to the log: it is kept encrypted, and the operator reads it with
// `pier admin integrations webhook-tokens`. The webhook URL is public, so anyone can post such a request:
// a stored token is never used to verify anything (docs/integrations.md, "Provider webhooks"), and only the
// newest few per connector are kept so that a flood of them cannot grow the table.

/** How many tokens a connector keeps (newest first); enough to find the real one among stray posts. */
export const KEEP = 10;

export const WEBHOOK_TOKENS_COMMAND = (slug: string) =>
  `pier admin integrations webhook-tokens --connector ${slug}`;

export async function storeVerificationToken(d: IntegrationDeps, slug: string, token: string): Promise<void> {
  await d.db.orm
    .insert(tokens)
    .values({ connectorSlug: slug, tokenEnc: d.keyring.encrypt(token), receivedAt: d.clock.now() });
  const kept = await d.db.orm
    .select({ id: tokens.id })
    .from(tokens)
    .where(eq(tokens.connectorSlug, slug))
    .orderBy(desc(tokens.id))
    .offset(KEEP);
  if (kept.length)
    await d.db.orm.delete(tokens).where(
      inArray(
        tokens.id,
        kept.map((r) => r.id),
      ),
    );
}
