import type { PayloadOf } from '../../core/jobs.ts';
import { defineArea } from '../manifest.ts';
import { integrationsDashboardFns } from './dashboard-fn.ts';
import { integrationsCatalogue } from './errors.ts';
import { INTEGRATIONS_REFRESH_CRON, INTEGRATIONS_REFRESH_JOB, integrationsRefreshJob } from './jobs.ts';
import { getIntegrationUsageByDayForCli } from './usage-fn.ts';
import { integrationsHandRoutes, integrationsV1 } from './v1.ts';

// Integrations: connectors as data, OAuth connections with encrypted tokens refreshed before expiry, the
// unified CRM/storage/communication/productivity operations and passthrough (docs/integrations.md).
export const integrationsArea = defineArea({
  name: 'integrations',
  errors: [integrationsCatalogue],
  v1: [integrationsV1],
  v1Plugins: [{ prefix: '/integrations', plugin: integrationsHandRoutes }],
  fns: [...integrationsDashboardFns, getIntegrationUsageByDayForCli],
  jobs: [integrationsRefreshJob],
  schedules: [{ job: INTEGRATIONS_REFRESH_JOB, cron: INTEGRATIONS_REFRESH_CRON }],
  migrations: [
    {
      area: 'integrations',
      schema: ['src/areas/integrations/tables.ts', 'src/areas/integrations/sync-tables.ts'],
    },
  ],
  // Passthrough and the OAuth callback are not operations an agent should call blindly.
  notTools: ['integrations.passthrough', 'getIntegrationUsageByDayForCli'],
});

// Its jobs' payloads, so deps.jobs.enqueue(name, payload) type-checks anywhere (docs/areas.md).
declare module '../../core/jobs.ts' {
  interface JobPayloads {
    'integrations.refresh-tokens': PayloadOf<typeof integrationsRefreshJob>;
  }
}
