import type { FnOutput } from '../../../src/sdk/types.ts';
import { fn } from '../api.ts';
import { Table } from '../table.tsx';
import { ErrorNote, fmtDate, useLoad } from '../ui.tsx';

// One connection's provider calls (newest first, credentials already redacted by Pier), under the
// connections table of the integrations page: GET /v1/integrations/connections/{id}/logs for the dashboard.

type Logs = FnOutput<'listIntegrationCallLogsForDashboard'>;

export function ConnectionCalls(props: {
  scope: { orgSlug: string; environment: 'production' | 'sandbox' };
  connectionId: string;
  connector: string;
  onClose(): void;
}) {
  const logs = useLoad(
    async () =>
      (
        await fn<Logs>('listIntegrationCallLogsForDashboard', {
          ...props.scope,
          connectionId: props.connectionId,
          limit: 100,
        })
      ).data,
    [props.connectionId, props.scope.environment],
  );
  return (
    <section aria-label={`Provider calls of ${props.connector}`}>
      <h2>
        Provider calls: {props.connector}{' '}
        <button type="button" onClick={logs.reload}>
          Refresh
        </button>{' '}
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </h2>
      <ErrorNote error={logs.error} />
      <Table
        label="Provider calls"
        rows={logs.data}
        loading={!logs.data && !logs.error}
        rowKey={(l) => l.id}
        empty="No provider calls yet."
        columns={[
          { key: 'at', header: 'When', cell: (l) => fmtDate(l.createdAt) },
          { key: 'method', header: 'Method', cell: (l) => l.method },
          { key: 'path', header: 'Path', cell: (l) => <code title={l.host}>{l.path}</code> },
          {
            key: 'status',
            header: 'Status',
            cell: (l) => (l.status === null ? `no answer (${l.error ?? 'failed'})` : String(l.status)),
          },
          { key: 'ms', header: 'Duration', cell: (l) => `${l.durationMs} ms` },
        ]}
      />
    </section>
  );
}
