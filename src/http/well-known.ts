import type { FastifyInstance } from 'fastify';
import { PLATFORM_SCOPES } from '../core/auth/caller.ts';

/** RFC 9728 protected-resource metadata, with Pier's credential types in an extension member. */
export function protectedResourceMetadata(publicUrl: string) {
  return {
    resource: publicUrl,
    resource_name: 'Pier',
    // Pier is its own authorization server (src/areas/oauth); its tokens are for /mcp, whose own metadata
    // is at /.well-known/oauth-protected-resource/mcp.
    authorization_servers: [publicUrl],
    resource_documentation: `${publicUrl}/api/fn/openapi.json`,
    scopes_supported: [...PLATFORM_SCOPES],
    bearer_methods_supported: ['header'],
    // Extension member (RFC 9728 §2 allows additional parameters): the bearer credential kinds accepted.
    pier_credential_types: [
      { type: 'personal_token', prefix: 'pk.', format: 'pk.<keyId>.<secret>', scopes: false },
      { type: 'platform_credential', prefix: 'plat.', format: 'plat.<keyId>.<secret>', scopes: true },
    ],
  };
}

export async function wellKnownRoutes(app: FastifyInstance, opts: { publicUrl: string }): Promise<void> {
  const doc = protectedResourceMetadata(opts.publicUrl);
  app.get('/.well-known/oauth-protected-resource', async (_req, reply) => {
    reply.header('cache-control', 'public, max-age=300');
    return doc;
  });
}
