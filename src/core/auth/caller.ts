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
      /** Set when via is 'oauth': what the user granted an MCP client at consent (src/areas/oauth). */
      oauth?: OAuthGrantScope;
    }
  | { kind: 'platform'; credentialId: string; keyId: string; scopes: string[] }
  | { kind: 'operator'; credentialId: string; keyId: string }
  | { kind: 'apikey'; credentialId: string; keyId: string; orgId: string; environment: Environment };

/** The reach of an OAuth access token: its client, its audience (the resource it is for) and the grant. */
export type OAuthGrantScope = {
  clientId: string;
  audience: string;
  orgIds: string[];
  environment: Environment;
};

export const PLATFORM_SCOPES = ['org.create', 'project.create', 'deploy', 'model.resolve'] as const;
export type PlatformScope = (typeof PLATFORM_SCOPES)[number];
