import type { PayloadOf } from '../../core/jobs.ts';
import { defineArea } from '../manifest.ts';
import { integrationsDashboardFns } from './dashboard-fn.ts';
import { integrationsCatalogue } from './errors.ts';
import { INTEGRATIONS_REFRESH_CRON, INTEGRATIONS_REFRESH_JOB, integrationsRefreshJob } from './jobs.ts';
import { adminListProviderWebhookTokens } from './provider-webhook-tokens-fn.ts';
import { providerWebhookRoutes } from './provider-webhooks.ts';
import { syncDashboardFns } from './sync-dashboard-fn.ts';
import { integrationsSyncJob, integrationsSyncsDueJob, SYNCS_DUE_CRON, SYNCS_DUE_JOB } from './sync-jobs.ts';
import { SYNC_SETUP_OPERATIONS } from './sync-v1.ts';
import { getIntegrationUsageByDayForCli } from './usage-fn.ts';
import { integrationsHandRoutes, integrationsV1 } from './v1.ts';

// Integrations: connectors as data, OAuth connections with encrypted tokens refreshed before expiry, the
// unified CRM/storage/communication/productivity operations and passthrough (docs/integrations.md).
export const integrationsArea = defineArea({
  name: 'integrations',
  errors: [integrationsCatalogue],
  v1: [integrationsV1],
  v1Plugins: [
    { prefix: '/integrations', plugin: integrationsHandRoutes },
    { prefix: '/integrations', plugin: providerWebhookRoutes },
  ],
  fns: [
    ...integrationsDashboardFns,
    ...syncDashboardFns,
    getIntegrationUsageByDayForCli,
    adminListProviderWebhookTokens,
  ],
  jobs: [integrationsRefreshJob, integrationsSyncsDueJob, integrationsSyncJob],
  schedules: [
    { job: INTEGRATIONS_REFRESH_JOB, cron: INTEGRATIONS_REFRESH_CRON },
    { job: SYNCS_DUE_JOB, cron: SYNCS_DUE_CRON },
  ],
  migrations: [
    {
      area: 'integrations',
      schema: [
        'src/areas/integrations/tables.ts',
        'src/areas/integrations/sync-tables.ts',
        'src/areas/integrations/call-log-tables.ts',
      ],
    },
  ],
  // Passthrough and the OAuth callback are not operations an agent should call blindly.
  notTools: [
    'integrations.passthrough',
    'getIntegrationUsageByDayForCli',
    // The operator's: secrets a provider sent to its webhook URL (docs/integrations.md).
    'adminListProviderWebhookTokens',
    // Syncs are set up once by the app's developer and read by the app's code (docs/mcp.md).
    ...SYNC_SETUP_OPERATIONS,
    'listIntegrationSyncsForDashboard',
    'listIntegrationSyncRunsForDashboard',
    // A connection's provider-call log is for people debugging it (API and dashboard), not an agent's action.
    'integrations.connections.logs',
    'listIntegrationCallLogsForDashboard',
    // The app's backend makes these for its end users' browsers (the hosted Connect page).
    'integrations.connectSessions.create',
  ],
});

// Its jobs' payloads, so deps.jobs.enqueue(name, payload) type-checks anywhere (docs/areas.md).
declare module '../../core/jobs.ts' {
  interface JobPayloads {
    'integrations.refresh-tokens': PayloadOf<typeof integrationsRefreshJob>;
    'integrations.syncs-due': PayloadOf<typeof integrationsSyncsDueJob>;
    'integrations.sync': PayloadOf<typeof integrationsSyncJob>;
  }
}
