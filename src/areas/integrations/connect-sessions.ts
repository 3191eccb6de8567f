import { z } from 'zod';
import { type IntegrationDeps, isConfigured, type Scope } from './connection-tokens.ts';
import { connectorBySlug, connectors } from './connectors/index.ts';
import type { Connector } from './connectors/types.ts';
import { integrationsErrors } from './errors.ts';

// Connect sessions: what an app's backend asks for before sending its end user to Pier's hosted Connect page
// (connect-page.ts). A session is a signed, short-lived token (no table): the organization and environment
// of the API key that made it, the end user, the connectors offered, where to send the browser back, and
// the page's theme. Like the download URLs (decision 136) it cannot be revoked, so it lives 30 minutes.

export const CONNECT_SESSION_TTL_SEC = 30 * 60;
const SIGN_PREFIX = 'integrations-connect:';

export const theme = z.strictObject({
  /** The app's name in the page's heading. */
  name: z.string().trim().min(1).max(60).optional(),
  /** Buttons and links; a #rrggbb colour. */
  primaryColor: z
    .string()
    .regex(/^#[0-9a-fA-F]{6}$/)
    .optional(),
  /** An https image shown beside the name. */
  logoUrl: z
    .url({ protocol: /^https$/ })
    .max(500)
    .optional(),
});

export const createSessionBody = z.object({
  endUserId: z.string().min(1).max(300),
  redirectUrl: z.url({ protocol: /^https?$/ }).max(2000),
  /** Connector slugs the end user may pick from; every configured connector when left out. */
  allowedConnectors: z.array(z.string().min(1).max(100)).min(1).max(100).optional(),
  theme: theme.optional(),
});

const claims = z.object({
  o: z.string(),
  e: z.enum(['production', 'sandbox']),
  u: z.string(),
  r: z.string(),
  a: z.array(z.string()).nullable(),
  t: theme.optional(),
  x: z.number().int(),
});
export type ConnectSession = {
  scope: Scope;
  endUserId: string;
  redirectUrl: string;
  allowed: string[] | null;
  theme: z.infer<typeof theme>;
  token: string;
};

export function createConnectSession(
  d: IntegrationDeps,
  s: Scope,
  body: z.infer<typeof createSessionBody>,
): { token: string; url: string; expiresAt: string } {
  for (const slug of body.allowedConnectors ?? []) {
    const c = connectorBySlug(slug);
    if (!c) throw integrationsErrors.connectorNotFound(slug);
    if (!isConfigured(d, c))
      throw integrationsErrors.connectorNotConfigured(
        slug,
        `INTEGRATIONS_${slug.toUpperCase().replace(/-/g, '_')}`,
      );
  }
  const x = Math.floor(d.clock.now().getTime() / 1000) + CONNECT_SESSION_TTL_SEC;
  const c: z.infer<typeof claims> = {
    o: s.orgId,
    e: s.environment,
    u: body.endUserId,
    r: body.redirectUrl,
    a: body.allowedConnectors ? [...new Set(body.allowedConnectors)] : null,
    t: body.theme,
    x,
  };
  const payload = Buffer.from(JSON.stringify(c)).toString('base64url');
  const token = `${payload}.${d.keyring.sign(SIGN_PREFIX + payload)}`;
  return {
    token,
    url: `${d.config.publicUrl.replace(/\/+$/, '')}/v1/integrations/connect?session=${token}`,
    expiresAt: new Date(x * 1000).toISOString(),
  };
}

/** The session a token stands for; a bad or expired token is CONNECT_SESSION_INVALID. */
export function readConnectSession(d: IntegrationDeps, token: string | undefined): ConnectSession {
  const [payload, sig] = (token ?? '').split('.');
  if (!payload || !sig || !d.keyring.verify(SIGN_PREFIX + payload, sig))
    throw integrationsErrors.connectSessionInvalid('it is not one Pier made');
  let c: z.infer<typeof claims>;
  try {
    c = claims.parse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
  } catch {
    throw integrationsErrors.connectSessionInvalid('it is malformed');
  }
  if (c.x * 1000 <= d.clock.now().getTime()) throw integrationsErrors.connectSessionInvalid('it has expired');
  return {
    scope: { orgId: c.o, environment: c.e },
    endUserId: c.u,
    redirectUrl: c.r,
    allowed: c.a,
    theme: c.t ?? {},
    token: token!,
  };
}

/** The connectors the session offers: its list (or every one), configured on this Pier. */
export function offered(d: IntegrationDeps, s: ConnectSession): Connector[] {
  const list = s.allowed ? s.allowed.map((slug) => connectorBySlug(slug)).filter((c) => !!c) : connectors;
  return list.filter((c) => isConfigured(d, c));
}
