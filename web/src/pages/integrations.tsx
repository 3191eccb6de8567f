import { useState } from 'preact/hooks';
import type { FnOutput } from '../../../src/sdk/types.ts';
import { fn, isManager, type Org } from '../api.ts';
import { curlPost, keyKind, NextStep } from '../components/next-step.tsx';
import { useLocation } from '../router.ts';
import { Table } from '../table.tsx';
import { EnvSwitch, ErrorNote, fmtDate, Page, useLoad } from '../ui.tsx';
import { ConnectionCalls } from './integration-calls.tsx';
import { IntegrationSyncs } from './integration-syncs.tsx';
import { AreaUsage, IntegrationUsage } from './usage.tsx';

// Integrations: the operator's connectors (configured or not, and the variables an unconfigured one needs),
// the organization's connections in one environment with a Test button, and "Connect", which runs the OAuth
// flow for a test end user: the browser goes to the provider and Pier's callback sends it back here with
// `?env=…&connectionId=…&status=success|error[&error=…]`. Functions: src/areas/integrations/dashboard-fn.ts.

type Env = 'production' | 'sandbox';
type TestResult = FnOutput<'testIntegrationConnectionForCli'>;

export function IntegrationsPage(props: { org: Org }) {
  const { query } = useLocation();
  const [environment, setEnvironment] = useState<Env>(
    query.get('env') === 'sandbox' ? 'sandbox' : 'production',
  );
  const outcome = query.get('status') ? { status: query.get('status'), error: query.get('error') } : null;
  const scope = { orgSlug: props.org.slug, environment };
  const connectors = useLoad(
    async () =>
      (await fn<FnOutput<'listIntegrationConnectorsForCli'>>('listIntegrationConnectorsForCli', {})).data,
    [],
  );
  const connections = useLoad(
    async () =>
      (await fn<FnOutput<'listIntegrationConnectionsForCli'>>('listIntegrationConnectionsForCli', scope))
        .data,
    [props.org.slug, environment],
  );
  const [tests, setTests] = useState<Record<string, TestResult | 'running'>>({});
  const [actionError, setActionError] = useState<unknown>(null);
  const [callsOf, setCallsOf] = useState<{ id: string; connector: string } | null>(null);
  const manager = isManager(props.org);

  const connectTo = async (slug: string) => {
    setActionError(null);
    try {
      const r = await fn<FnOutput<'connectIntegrationForDashboard'>>('connectIntegrationForDashboard', {
        ...scope,
        connectorSlug: slug,
      });
      // Key-based providers connect at once (no consent screen to visit).
      if (r.authorizationUrl) location.assign(r.authorizationUrl);
      else connections.reload();
    } catch (err) {
      setActionError(err);
    }
  };
  const test = async (id: string) => {
    setTests((t) => ({ ...t, [id]: 'running' }));
    try {
      const r = await fn<TestResult>('testIntegrationConnectionForCli', { ...scope, connectionId: id });
      setTests((t) => ({ ...t, [id]: r }));
      connections.reload();
    } catch (err) {
      setTests((t) => ({
        ...t,
        [id]: { success: false, error: err instanceof Error ? err.message : String(err) },
      }));
    }
  };

  return (
    <Page
      title="Integrations"
      intro={`Connections of ${props.org.name}'s end users to their CRM, storage, chat and workspace accounts. Live API keys use production connections, test keys the sandbox's.`}
    >
      {outcome ? (
        <p
          class={outcome.status === 'success' ? 'notice' : 'warning'}
          role="status"
          data-testid="connect-outcome"
        >
          {outcome.status === 'success'
            ? 'Connected: the provider granted access.'
            : `The connection failed: ${outcome.error ?? 'the provider did not grant access'}.`}
        </p>
      ) : null}
      <AreaUsage>
        <IntegrationUsage org={props.org} />
      </AreaUsage>
      <EnvSwitch value={environment} onChange={setEnvironment} />
      <ErrorNote error={actionError} />
      <h2>Connectors</h2>
      <ErrorNote error={connectors.error} />
      <Table
        label="Connectors"
        rows={connectors.data}
        loading={!connectors.data && !connectors.error}
        rowKey={(c) => c.slug}
        columns={[
          { key: 'name', header: 'Connector', cell: (c) => c.name },
          { key: 'category', header: 'Category', cell: (c) => c.category },
          {
            key: 'configured',
            header: 'Configured',
            cell: (c) =>
              c.configured ? (
                <span class="badge">configured</span>
              ) : (
                <span title={`optional: ${c.env.optional.join(', ')}`}>
                  needs {c.env.required.join(' and ')}
                </span>
              ),
          },
          {
            key: 'connect',
            header: 'Connect',
            cell: (c) =>
              c.configured && manager ? (
                <button type="button" onClick={() => connectTo(c.slug)} aria-label={`Connect ${c.name}`}>
                  Connect
                </button>
              ) : (
                '-'
              ),
          },
        ]}
      />
      <h2>Connections</h2>
      <ErrorNote error={connections.error} />
      <Table
        label="Connections"
        rows={connections.data}
        loading={!connections.data && !connections.error}
        rowKey={(c) => c.id}
        empty={
          <NextStep
            testId="connections-empty"
            what={`No connections in ${environment} yet. Connect an end user's account with a ${keyKind(environment)} API key (OAuth providers answer an authorizationUrl to send them to):`}
            command={curlPost('/integrations/connections', {
              connectorSlug: 'sendgrid',
              endUserId: 'user-123',
              credentials: { apiKey: '<their key>' },
            })}
          />
        }
        columns={[
          { key: 'connector', header: 'Connector', cell: (c) => c.connectorSlug },
          {
            key: 'status',
            header: 'Status',
            cell: (c) => (
              <span title={c.statusReason ?? undefined}>
                <span class={`badge status-${c.status}`}>{c.status}</span>
                {c.statusReason ? ` ${c.statusReason}` : ''}
              </span>
            ),
          },
          { key: 'user', header: 'End user', cell: (c) => c.endUserId },
          { key: 'account', header: 'Account', cell: (c) => c.externalAccountName ?? '-' },
          { key: 'used', header: 'Last used', cell: (c) => (c.lastUsedAt ? fmtDate(c.lastUsedAt) : 'never') },
          {
            key: 'test',
            header: 'Test',
            cell: (c) => {
              const r = tests[c.id];
              return (
                <span>
                  <button type="button" disabled={r === 'running'} onClick={() => test(c.id)}>
                    Test
                  </button>{' '}
                  {r && r !== 'running' ? (
                    <span data-testid="test-result">{r.success ? 'works' : `failed: ${r.error}`}</span>
                  ) : null}
                </span>
              );
            },
          },
          {
            key: 'calls',
            header: 'Calls',
            cell: (c) => (
              <button
                type="button"
                aria-label={`Provider calls of ${c.connectorSlug}`}
                onClick={() => setCallsOf({ id: c.id, connector: c.connectorSlug })}
              >
                Calls
              </button>
            ),
          },
        ]}
      />
      {callsOf ? (
        <ConnectionCalls
          scope={scope}
          connectionId={callsOf.id}
          connector={callsOf.connector}
          onClose={() => setCallsOf(null)}
        />
      ) : null}
      <IntegrationSyncs scope={scope} />
    </Page>
  );
}
