import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Deps } from '../../deps.ts';
import { checkFormBody } from '../../http/unicode.ts';
import { RedirectableError, SCOPES, startAuthorization } from './authorize.ts';
import { registerClient } from './clients.ts';
import { OAuthError } from './oauth-error.ts';
import { exchangeCode, refresh, revokeToken } from './tokens.ts';

// The authorization server's HTTP face: RFC 8414 metadata, the /mcp resource's RFC 9728 metadata, and the
// endpoints under /api/oauth (kept under /api so the dashboard's page paths never shadow them).

export function authorizationServerMetadata(publicUrl: string) {
  return {
    issuer: publicUrl,
    authorization_endpoint: `${publicUrl}/api/oauth/authorize`,
    token_endpoint: `${publicUrl}/api/oauth/token`,
    registration_endpoint: `${publicUrl}/api/oauth/register`,
    revocation_endpoint: `${publicUrl}/api/oauth/revoke`,
    scopes_supported: [...SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_post', 'client_secret_basic'],
    revocation_endpoint_auth_methods_supported: ['none', 'client_secret_post', 'client_secret_basic'],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${publicUrl}/api/fn/openapi.json`,
  };
}

/** RFC 9728 metadata of the MCP endpoint: the resource every Pier OAuth token is bound to. */
export function mcpResourceMetadata(publicUrl: string) {
  return {
    resource: `${publicUrl}/mcp`,
    resource_name: 'Pier MCP',
    authorization_servers: [publicUrl],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
  };
}

function sendError(reply: FastifyReply, e: unknown) {
  if (e instanceof OAuthError) {
    for (const [k, v] of Object.entries(e.headers)) reply.header(k, v);
    if (e.status === 401 && e.error === 'invalid_client')
      reply.header('www-authenticate', 'Basic realm="pier"');
    return reply.status(e.status).header('cache-control', 'no-store').send(e.body());
  }
  throw e;
}

/** Form fields as strings; a repeated parameter is a bad request (RFC 6749 §3.1). */
function fields(body: unknown): Record<string, string> {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new OAuthError('invalid_request', 'Send the parameters as application/x-www-form-urlencoded.');
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    if (typeof v !== 'string')
      throw new OAuthError('invalid_request', `Parameter '${k.slice(0, 50)}' must be one string.`);
    out[k] = v;
  }
  return out;
}

function parseForm(text: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(text)) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

export async function oauthRoutes(app: FastifyInstance, opts: { deps: Deps }): Promise<void> {
  const { deps } = opts;
  const publicUrl = deps.config.publicUrl;
  const asMeta = authorizationServerMetadata(publicUrl);
  const rsMeta = mcpResourceMetadata(publicUrl);

  // Malformed bodies (bad JSON, too large, another media type) answer in OAuth's shape here too.
  // Fastify's own failures carry a 4xx statusCode; anything else is ours and a 500.
  app.setErrorHandler(
    (err: { statusCode?: number; status?: number; code?: string; message?: string }, req, reply) => {
      // A refusal from the shared transport checks (an unpaired surrogate in the body) says what it refused.
      const refused = err.code === 'VALIDATION_ERROR';
      const s = refused ? err.status : err.statusCode;
      if (typeof s === 'number' && s >= 400 && s < 500)
        return reply.status(s).send({
          error: 'invalid_request',
          error_description: refused ? err.message : 'The request could not be read.',
        });
      req.log.error({ err }, 'oauth request failed');
      return reply
        .status(500)
        .send({ error: 'server_error', error_description: 'An internal error occurred.' });
    },
  );

  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 16 * 1024 },
    (_req, body, done) => {
      try {
        checkFormBody(body as string);
      } catch (refusal) {
        return done(refusal as Error);
      }
      done(null, parseForm(body as string));
    },
  );

  // Browser-based MCP clients (an inspector page) call these from their own origin. None of them reads a
  // cookie, so any origin may: the answer depends only on what the request itself carries.
  const CORS_PATHS = ['/api/oauth/token', '/api/oauth/register', '/api/oauth/revoke'];
  app.addHook('onSend', async (req, reply) => {
    if (req.url.startsWith('/.well-known/') || CORS_PATHS.includes(req.url.split('?')[0]!))
      reply.header('access-control-allow-origin', '*');
  });
  for (const path of CORS_PATHS) {
    app.options(path, async (_req, reply) =>
      reply
        .status(204)
        .header('access-control-allow-methods', 'POST, OPTIONS')
        .header('access-control-allow-headers', 'authorization, content-type, mcp-protocol-version')
        .header('access-control-max-age', '600')
        .send(),
    );
  }

  for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
    app.get(path, async (_req, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return asMeta;
    });
  }
  app.get('/.well-known/oauth-protected-resource/mcp', async (_req, reply) => {
    reply.header('cache-control', 'public, max-age=300');
    return rsMeta;
  });

  app.get('/api/oauth/authorize', async (req, reply) => {
    try {
      const q = fields(req.query);
      const { consentUrl } = await startAuthorization(deps, q, {
        ip: req.ip,
        userAgent: req.headers['user-agent'],
      });
      return reply.redirect(consentUrl, 302);
    } catch (e) {
      if (e instanceof RedirectableError) return reply.redirect(e.location, 302);
      return sendError(reply, e);
    }
  });

  app.post('/api/oauth/token', async (req, reply) => {
    try {
      const body = fields(req.body);
      const auth = req.headers.authorization;
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      if (body.grant_type === 'authorization_code') return await exchangeCode(deps, body, auth);
      if (body.grant_type === 'refresh_token') return await refresh(deps, body, auth);
      throw new OAuthError(
        body.grant_type ? 'unsupported_grant_type' : 'invalid_request',
        body.grant_type
          ? `grant_type '${body.grant_type.slice(0, 50)}' is not supported.`
          : 'grant_type is required.',
      );
    } catch (e) {
      return sendError(reply, e);
    }
  });

  app.post('/api/oauth/register', async (req, reply) => {
    try {
      const out = await registerClient(deps, req.body, req.ip);
      return reply.status(201).header('cache-control', 'no-store').send(out);
    } catch (e) {
      return sendError(reply, e);
    }
  });

  app.post('/api/oauth/revoke', async (req, reply) => {
    try {
      await revokeToken(deps, fields(req.body), req.headers.authorization);
      return reply.status(200).send({});
    } catch (e) {
      return sendError(reply, e);
    }
  });
}
