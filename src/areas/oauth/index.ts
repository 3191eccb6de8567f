import type { PayloadOf } from '../../core/jobs.ts';
import { defineArea } from '../manifest.ts';
import { oauthCatalogue } from './errors.ts';
import {
  decideOauthRequestForCli,
  getOauthRequestForCli,
  listOauthGrantsForCli,
  revokeOauthGrantForCli,
} from './fn.ts';
import { OAUTH_PRUNE_CRON, OAUTH_PRUNE_JOB, oauthPruneJob } from './prune.ts';
import { oauthRoutes } from './routes.ts';

// OAuth 2.1 authorization server for the MCP endpoint (issue 21): metadata, authorization code + PKCE,
// client metadata documents and dynamic registration, tokens bound to `${publicUrl}/mcp`, the consent and
// grant functions of the dashboard. docs/oauth.md.

export const oauthArea = defineArea({
  name: 'oauth',
  errors: [oauthCatalogue],
  fns: [getOauthRequestForCli, decideOauthRequestForCli, listOauthGrantsForCli, revokeOauthGrantForCli],
  http: oauthRoutes,
  jobs: [oauthPruneJob],
  schedules: [{ job: OAUTH_PRUNE_JOB, cron: OAUTH_PRUNE_CRON }],
  migrations: [{ area: 'oauth', schema: ['src/areas/oauth/tables.ts'] }],
  // Consent and grants are the user's to manage in the dashboard, never an agent's.
  notTools: [
    'getOauthRequestForCli',
    'decideOauthRequestForCli',
    'listOauthGrantsForCli',
    'revokeOauthGrantForCli',
  ],
});

// Its jobs' payloads, so deps.jobs.enqueue(name, payload) type-checks anywhere (docs/areas.md).
declare module '../../core/jobs.ts' {
  interface JobPayloads {
    'oauth.prune': PayloadOf<typeof oauthPruneJob>;
  }
}

export { mcpAudience } from './authorize.ts';
export { authorizationServerMetadata, mcpResourceMetadata } from './routes.ts';
