import { and, eq } from 'drizzle-orm';
import { newWebhookSecret } from './connection-events.ts';
import type { IntegrationDeps, Scope } from './connection-tokens.ts';
import { integrationsErrors } from './errors.ts';
import { integrationWebhookSettings as hooks } from './tables.ts';

// The organization's webhook URL for connection lifecycle events, per environment, and the secret its
// deliveries are signed with (made when the URL is first set, kept when the URL changes, rotated on ask).

const view = (d: IntegrationDeps, r: typeof hooks.$inferSelect) => ({
  url: r.url,
  secret: d.keyring.decrypt(r.secretEnc),
  updatedAt: r.updatedAt.toISOString(),
});

const where = (s: Scope) => and(eq(hooks.orgId, s.orgId), eq(hooks.environment, s.environment));

export async function getWebhookSettings(d: IntegrationDeps, s: Scope) {
  const [r] = await d.db.orm.select().from(hooks).where(where(s));
  if (!r) throw integrationsErrors.webhookNotSet();
  return view(d, r);
}

export async function setWebhookSettings(
  d: IntegrationDeps,
  s: Scope,
  input: { url: string; rotateSecret?: boolean },
) {
  const now = d.clock.now();
  const [cur] = await d.db.orm.select().from(hooks).where(where(s));
  const secretEnc = !cur || input.rotateSecret ? d.keyring.encrypt(newWebhookSecret()) : cur.secretEnc;
  const [r] = await d.db.orm
    .insert(hooks)
    .values({
      orgId: s.orgId,
      environment: s.environment,
      url: input.url,
      secretEnc,
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoUpdate({
      target: [hooks.orgId, hooks.environment],
      set: { url: input.url, secretEnc, updatedAt: now },
    })
    .returning();
  return view(d, r!);
}

export async function deleteWebhookSettings(d: IntegrationDeps, s: Scope) {
  const gone = await d.db.orm.delete(hooks).where(where(s)).returning({ orgId: hooks.orgId });
  if (!gone.length) throw integrationsErrors.webhookNotSet();
  return { success: true as const };
}
