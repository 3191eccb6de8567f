import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../../core/errors.ts';
import type { Deps } from '../../deps.ts';
import { defineRoute } from '../../http/v1-kit.ts';
import { errorPage, formPage, pickerPage } from './connect-page.ts';
import {
  type ConnectSession,
  createConnectSession,
  createSessionBody,
  offered,
  readConnectSession,
} from './connect-sessions.ts';
import { createConnection } from './connection-authorize.ts';

// The hosted Connect page: POST /v1/integrations/connect-sessions (API key) makes a session for one end
// user; its URL opens the page (public, the signed session is the credential), where the end user picks a
// provider, enters a key or a subdomain where the provider needs one, and is sent to the provider's consent
// screen (OAuth, back through Pier's callback) or straight back to the app's redirectUrl.

export const connectSessionRoute = defineRoute({
  method: 'POST',
  url: '/connect-sessions',
  name: 'integrations.connectSessions.create',
  summary: 'Start a Connect page session for an end user',
  description:
    "Send the end user's browser to `url` (valid 30 minutes). They pick one of `allowedConnectors` (default: every configured one), connect it, and come back to `redirectUrl` with `connectionId` and `status`.",
  body: createSessionBody,
  response: z.object({ token: z.string(), url: z.string(), expiresAt: z.string() }),
  status: 201,
  errors: ['CONNECTOR_NOT_FOUND', 'CONNECTOR_NOT_CONFIGURED'],
  handler: async (c, { body }) =>
    createConnectSession(c.deps, { orgId: c.caller.orgId, environment: c.caller.environment }, body),
});

const FIXABLE = new Set(['CREDENTIALS_INVALID', 'CREDENTIALS_REQUIRED', 'CONNECTION_CONFIG_INVALID']);

function html(reply: FastifyReply, status: number, body: string) {
  return reply
    .status(status)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'content-security-policy':
        "default-src 'none'; style-src 'unsafe-inline'; img-src https:; form-action 'self' https: http:; frame-ancestors 'none'",
    })
    .send(body);
}

function back(s: ConnectSession, q: Record<string, string>): string {
  const u = new URL(s.redirectUrl);
  for (const [k, v] of Object.entries(q)) u.searchParams.set(k, v);
  return u.toString();
}

export function registerConnect(app: FastifyInstance, deps: Deps): void {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 64 * 1024 },
    (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );
  const open = (token: string | undefined, reply: FastifyReply) => {
    try {
      return readConnectSession(deps, token);
    } catch (err) {
      if (err instanceof ApiError) html(reply, err.status, errorPage(err.message));
      else throw err;
      return null;
    }
  };
  const config = { v1Public: true };
  app.get('/connect', { schema: { hide: true }, config }, async (req, reply) => {
    const q = req.query as Record<string, string | undefined>;
    const s = open(q.session, reply);
    if (!s) return reply;
    const list = offered(deps, s);
    if (!q.connector) return html(reply, 200, pickerPage(s, list));
    const c = list.find((x) => x.slug === q.connector);
    if (!c) return html(reply, 404, errorPage('That provider is not offered here.'));
    return html(reply, 200, formPage(s, c));
  });
  app.post('/connect', { schema: { hide: true }, config }, async (req, reply) => {
    const f = (req.body ?? {}) as Record<string, string | undefined>;
    const s = open(f.session, reply);
    if (!s) return reply;
    const c = offered(deps, s).find((x) => x.slug === f.connector);
    if (!c) return html(reply, 404, errorPage('That provider is not offered here.'));
    const vars = Object.fromEntries(
      Object.keys(c.entry.variables).flatMap((k) => (f[`var_${k}`] ? [[k, f[`var_${k}`]!.trim()]] : [])),
    );
    const credentials =
      c.authType === 'oauth2'
        ? undefined
        : { apiKey: f.apiKey || undefined, username: f.username || undefined, password: f.password };
    try {
      const r = await createConnection(deps, s.scope, {
        connectorSlug: c.slug,
        endUserId: s.endUserId,
        redirectUrl: s.redirectUrl,
        connectionConfig: vars,
        credentials,
      });
      return reply.redirect(
        r.authorizationUrl ?? back(s, { connectionId: r.connectionId, status: 'success' }),
        303,
      );
    } catch (err) {
      if (err instanceof ApiError && FIXABLE.has(err.code))
        return html(reply, 400, formPage(s, c, f as Record<string, string>, err.message));
      if (err instanceof ApiError) return html(reply, err.status, errorPage(err.message));
      throw err;
    }
  });
}
