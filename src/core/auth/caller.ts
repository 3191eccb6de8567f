export type Environment = 'production' | 'sandbox';

// Every request carries its resolved caller (null until a hook resolved one). Declared beside the type so
// any program that reads `req.caller` (the server, the SDK's types in the dashboard's build) knows it.
declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null;
  }
}

/** Who is calling, resolved from a credential (or a dashboard session). */
export type Caller =
  | {
      kind: 'user';
      userId: string;
      credentialId: string;
      via: 'token' | 'session' | 'oauth';
      label: string;
      createdAt: Date;
      /** Set when via is 'session': the dashboard session (credentialId holds the same id). */
      sessionId?: string;
      /** Set when via is 'oauth': what the MCP client was granted at consent (docs/mcp.md). */
      oauth?: OAuthGrant;
    }
  | { kind: 'platform'; credentialId: string; keyId: string; scopes: string[] }
  | { kind: 'operator'; credentialId: string; keyId: string }
  | {
      kind: 'apikey';
      credentialId: string;
      keyId: string;
      orgId: string;
      environment: Environment;
      /** The key's own v1 rate limit, when it carries one (docs/v1-api.md, "Rate limits"). */
      rateLimit?: { perSec: number; burst: number };
    };

export const PLATFORM_SCOPES = ['org.create', 'project.create', 'deploy', 'model.resolve'] as const;
export type PlatformScope = (typeof PLATFORM_SCOPES)[number];

/** An OAuth access token's grant: its client, the resource it is bound to, and what the user consented to. */
export type OAuthGrant = {
  clientId: string;
  /** The resource (RFC 8707) the token is bound to; the MCP endpoint accepts only its own. */
  audience: string;
  orgIds: string[];
  environment: Environment;
};
