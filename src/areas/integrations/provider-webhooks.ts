import crypto from 'node:crypto';
import { and, eq, inArray } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import type { IntegrationClientConfig } from '../../config.ts';
import type { Deps } from '../../deps.ts';
import { sendAppWebhook } from './connection-events.ts';
import { envPrefix, type IntegrationDeps, operatorConfig } from './connection-tokens.ts';
import { connectorBySlug } from './connectors/index.ts';
import { integrationsErrors } from './errors.ts';
import { storeVerificationToken, WEBHOOK_TOKENS_COMMAND } from './provider-webhook-tokens.ts';
import { integrationConnections as conns } from './tables.ts';

// Provider webhooks (decision 135): one public URL per connector, POST /v1/integrations/webhooks/{slug}.
// Each request is verified with the provider's own scheme and the operator's secret (HubSpot v3, Slack's
// signing secret, Notion's verification token), its events mapped to the connections of the account they
// are about (HubSpot's portal, Slack's team, Notion's workspace: the connection's externalAccountId), and
// forwarded to each connection's organization as a `provider.webhook` Standard Webhook. A request that does
// not verify is answered 401 and logged, and goes nowhere.

type Incoming = { method: string; url: string; headers: Record<string, string | undefined>; raw: Buffer };
type ProviderEvent = { account: string; type: string; payload: unknown };
type Read = { events: ProviderEvent[] } | { reply: unknown };

type Scheme = {
  /** The operator's secret for it, and the variable that sets it. */
  secret(o: IntegrationClientConfig): string | undefined;
  secretVar: string;
  /** The reason it does not verify, or null. */
  verify(req: Incoming, secret: string, nowMs: number): string | null;
  read(body: unknown): Read;
  /** A request answered before any signature exists (Notion's one-time verification token). */
  unsigned?(req: Incoming, body: unknown): boolean;
};

/** How far a signed timestamp may be from now (HubSpot's, Slack's and Stripe's own five minutes). */
const MAX_SKEW_MS = 5 * 60_000;
const hmac = (secret: string, data: string | Buffer) => crypto.createHmac('sha256', secret).update(data);
function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}
function freshness(tsMs: number, nowMs: number): string | null {
  if (!Number.isFinite(tsMs)) return 'no valid timestamp';
  return Math.abs(nowMs - tsMs) > MAX_SKEW_MS ? 'timestamp more than 5 minutes away' : null;
}
const asObject = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

export const SCHEMES: Record<string, Scheme> = {
  // https://developers.hubspot.com/docs/api/webhooks/validating-requests (v3): base64 HMAC-SHA256 of
  // method + URI + body + timestamp (ms) with the app's client secret.
  hubspot: {
    secret: (o) => o.webhookSecret ?? o.clientSecret,
    secretVar: 'CLIENT_SECRET',
    verify(req, secret, now) {
      const sig = req.headers['x-hubspot-signature-v3'];
      const ts = req.headers['x-hubspot-request-timestamp'];
      if (!sig || !ts) return 'no X-HubSpot-Signature-v3 or X-HubSpot-Request-Timestamp';
      const stale = freshness(Number(ts), now);
      if (stale) return stale;
      const want = hmac(secret, `${req.method}${req.url}${req.raw.toString('utf8')}${ts}`).digest('base64');
      return same(sig, want) ? null : 'signature mismatch';
    },
    read: (body) => ({
      events: (Array.isArray(body) ? body : [body]).map((e) => {
        const o = asObject(e);
        return { account: String(o.portalId ?? ''), type: String(o.subscriptionType ?? 'event'), payload: e };
      }),
    }),
  },
  // https://api.slack.com/authentication/verifying-requests-from-slack: v0= hex HMAC-SHA256 of
  // "v0:<timestamp s>:<body>" with the app's signing secret.
  slack: {
    secret: (o) => o.webhookSecret,
    secretVar: 'WEBHOOK_SECRET',
    verify(req, secret, now) {
      const sig = req.headers['x-slack-signature'];
      const ts = req.headers['x-slack-request-timestamp'];
      if (!sig || !ts) return 'no X-Slack-Signature or X-Slack-Request-Timestamp';
      const stale = freshness(Number(ts) * 1000, now);
      if (stale) return stale;
      return same(sig, `v0=${hmac(secret, `v0:${ts}:${req.raw.toString('utf8')}`).digest('hex')}`)
        ? null
        : 'signature mismatch';
    },
    read(body) {
      const o = asObject(body);
      // The Events API's one-time URL check: answered with its challenge once signed.
      if (o.type === 'url_verification') return { reply: { challenge: o.challenge } };
      const event = asObject(o.event);
      return {
        events: [
          { account: String(o.team_id ?? ''), type: String(event.type ?? o.type ?? 'event'), payload: o },
        ],
      };
    },
  },
  // https://developers.notion.com/reference/webhooks: X-Notion-Signature is sha256= hex HMAC-SHA256 of the
  // body with the subscription's verification token.
  notion: {
    secret: (o) => o.webhookSecret,
    secretVar: 'WEBHOOK_SECRET',
    verify(req, secret) {
      const sig = req.headers['x-notion-signature'];
      if (!sig) return 'no X-Notion-Signature';
      return same(sig, `sha256=${hmac(secret, req.raw).digest('hex')}`) ? null : 'signature mismatch';
    },
    read(body) {
      const o = asObject(body);
      return {
        events: [{ account: String(o.workspace_id ?? ''), type: String(o.type ?? 'event'), payload: o }],
      };
    },
    // Notion's first request carries the token that will sign the rest, unsigned, for the operator to read
    // (`pier admin integrations webhook-tokens`) and paste into Notion and INTEGRATIONS_NOTION_WEBHOOK_SECRET.
    unsigned: (req, body) =>
      !req.headers['x-notion-signature'] &&
      typeof asObject(body).verification_token === 'string' &&
      Object.keys(asObject(body)).length === 1,
  },
};

export const supportsWebhooks = (slug: string) => slug in SCHEMES;

/** Verifies, maps and forwards one provider request; answers what the provider is told. */
export async function receiveProviderWebhook(
  d: IntegrationDeps,
  slug: string,
  req: Incoming,
): Promise<{ status: number; body: unknown }> {
  if (!connectorBySlug(slug)) throw integrationsErrors.connectorNotFound(slug);
  const scheme = SCHEMES[slug];
  if (!scheme) throw integrationsErrors.operationNotSupported(slug, 'webhook');
  let body: unknown;
  try {
    body = JSON.parse(req.raw.toString('utf8') || 'null');
  } catch {
    body = undefined;
  }
  const secret = scheme.secret(operatorConfig(d, slug));
  if (!secret && scheme.unsigned?.(req, body)) {
    // The token signs every later webhook: kept encrypted for the operator, never logged.
    await storeVerificationToken(d, slug, String(asObject(body).verification_token));
    d.log.warn(
      { connector: slug },
      `integrations: ${slug} sent its webhook verification token; read it with \`${WEBHOOK_TOKENS_COMMAND(slug)}\` and set ${envPrefix(slug)}_WEBHOOK_SECRET to it`,
    );
    return { status: 200, body: { received: true } };
  }
  const why = !secret
    ? `the operator has not set ${envPrefix(slug)}_${scheme.secretVar}`
    : (scheme.verify(req, secret, d.clock.now().getTime()) ??
      (body === undefined ? 'body is not JSON' : null));
  if (why) {
    d.log.warn({ connector: slug, reason: why }, 'integrations: provider webhook refused');
    throw integrationsErrors.webhookSignatureInvalid(slug, why);
  }
  const read = scheme.read(body);
  if ('reply' in read) return { status: 200, body: read.reply };
  const forwarded = await forward(d, slug, read.events);
  return { status: 200, body: { received: read.events.length, forwarded } };
}

/** One `provider.webhook` per connection of the accounts named, with that account's events. */
async function forward(d: IntegrationDeps, slug: string, events: ProviderEvent[]): Promise<number> {
  const accounts = [...new Set(events.map((e) => e.account).filter(Boolean))];
  const rows = accounts.length
    ? await d.db.orm
        .select()
        .from(conns)
        .where(and(eq(conns.connectorSlug, slug), inArray(conns.externalAccountId, accounts)))
    : [];
  const unmatched = accounts.filter((a) => !rows.some((r) => r.externalAccountId === a));
  if (unmatched.length)
    d.log.info({ connector: slug, accounts: unmatched }, 'integrations: provider webhook for no connection');
  let sent = 0;
  for (const row of rows) {
    const mine = events.filter((e) => e.account === row.externalAccountId);
    const ok = await sendAppWebhook(d, row, 'provider.webhook', {
      connectionId: row.id,
      connectorSlug: slug,
      endUserId: row.endUserId,
      environment: row.environment,
      events: mine.map((e) => ({ type: e.type, payload: e.payload })),
    });
    if (ok) sent++;
  }
  return sent;
}

/**
 * The public route (no API key; the provider's signature is the check). Its body is read as bytes, since
 * signatures are over the exact bytes sent: this plugin's own content-type parser, not the JSON one.
 */
export async function providerWebhookRoutes(app: FastifyInstance, opts: { deps: Deps }): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 1024 * 1024 }, (_req, body, done) =>
    done(null, body),
  );
  app.post('/webhooks/:slug', { schema: { hide: true }, config: { v1Public: true } }, async (req, reply) => {
    const { slug } = req.params as { slug: string };
    const headers: Record<string, string | undefined> = {};
    for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v[0] : v;
    const out = await receiveProviderWebhook(opts.deps, slug, {
      method: req.method,
      url: `${opts.deps.config.publicUrl.replace(/\/$/, '')}${req.url}`,
      headers,
      raw: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
    });
    return reply.status(out.status).send(out.body);
  });
}
