import { useState } from 'preact/hooks';
import type { FnOutput } from '../../../src/sdk/types.ts';
import { fn } from '../api.ts';
import { curlPost, NextStep } from '../components/next-step.tsx';
import { Table } from '../table.tsx';
import { ErrorNote, fmtDate, useLoad } from '../ui.tsx';

// The integrations page's syncs: each sync of the environment with its connection, records held and last
// run (counts, or the error it stopped on), and one sync's runs on demand. Set up through the API
// (docs/integrations.md, "Syncs"). Functions: src/areas/integrations/sync-dashboard-fn.ts.

type Scope = { orgSlug: string; environment: 'production' | 'sandbox' };
type Syncs = FnOutput<'listIntegrationSyncsForDashboard'>;
type Runs = FnOutput<'listIntegrationSyncRunsForDashboard'>;
type Run = Runs['data'][number];

const outcome = (r: Run | null) =>
  !r
    ? 'not run yet'
    : r.status === 'failed'
      ? `failed: ${r.errorCode ?? ''} ${r.error ?? ''}`.trim()
      : `${r.status}: +${r.added} ~${r.updated} -${r.deleted}`;

export function IntegrationSyncs(props: { scope: Scope }) {
  const syncs = useLoad(
    async () => (await fn<Syncs>('listIntegrationSyncsForDashboard', props.scope)).data,
    [props.scope.orgSlug, props.scope.environment],
  );
  const [runsOf, setRunsOf] = useState<{ id: string; label: string } | null>(null);
  return (
    <section aria-label="Syncs">
      <h2>
        Syncs{' '}
        <button type="button" onClick={syncs.reload}>
          Refresh
        </button>
      </h2>
      <ErrorNote error={syncs.error} />
      <Table
        label="Syncs"
        rows={syncs.data}
        loading={!syncs.data && !syncs.error}
        rowKey={(s) => s.id}
        empty={
          <NextStep
            testId="syncs-empty"
            what="No syncs yet. Copy a CRM connection's contacts into Pier every hour, then read what changed:"
            command={curlPost('/integrations/syncs', { connectionId: '<connection id>', model: 'contacts' })}
          />
        }
        columns={[
          { key: 'connection', header: 'Connection', cell: (s) => `${s.connectorSlug} · ${s.endUserId}` },
          { key: 'model', header: 'Model', cell: (s) => s.model },
          {
            key: 'every',
            header: 'Every',
            cell: (s) => (s.paused ? 'paused' : `${s.frequencyMinutes} min`),
          },
          { key: 'records', header: 'Records', cell: (s) => String(s.records) },
          {
            key: 'last',
            header: 'Last run',
            cell: (s) => (
              <span
                data-testid="sync-last-run"
                class={s.lastRun?.status === 'failed' ? 'warning' : undefined}
              >
                {outcome(s.lastRun)}
                {s.lastRun ? ` (${fmtDate(s.lastRun.startedAt)})` : ''}
              </span>
            ),
          },
          { key: 'next', header: 'Next run', cell: (s) => (s.paused ? '-' : fmtDate(s.nextRunAt)) },
          {
            key: 'runs',
            header: 'Runs',
            cell: (s) => (
              <button
                type="button"
                aria-label={`Runs of the ${s.model} sync of ${s.connectorSlug}`}
                onClick={() => setRunsOf({ id: s.id, label: `${s.connectorSlug} ${s.model}` })}
              >
                Runs
              </button>
            ),
          },
        ]}
      />
      {runsOf ? <SyncRuns scope={props.scope} sync={runsOf} onClose={() => setRunsOf(null)} /> : null}
    </section>
  );
}

function SyncRuns(props: { scope: Scope; sync: { id: string; label: string }; onClose(): void }) {
  const runs = useLoad(
    async () =>
      (await fn<Runs>('listIntegrationSyncRunsForDashboard', { ...props.scope, syncId: props.sync.id })).data,
    [props.sync.id],
  );
  return (
    <section aria-label={`Runs of ${props.sync.label}`}>
      <h3>
        Runs: {props.sync.label}{' '}
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </h3>
      <ErrorNote error={runs.error} />
      <Table
        label="Sync runs"
        rows={runs.data}
        loading={!runs.data && !runs.error}
        rowKey={(r) => r.id}
        empty="No runs yet."
        columns={[
          { key: 'at', header: 'Started', cell: (r) => fmtDate(r.startedAt) },
          { key: 'status', header: 'Status', cell: (r) => `${r.status}${r.resumed ? ' (resumed)' : ''}` },
          { key: 'pages', header: 'Pages', cell: (r) => String(r.pages) },
          { key: 'added', header: 'Added', cell: (r) => String(r.added) },
          { key: 'updated', header: 'Updated', cell: (r) => String(r.updated) },
          { key: 'deleted', header: 'Deleted', cell: (r) => String(r.deleted) },
          { key: 'error', header: 'Error', cell: (r) => (r.error ? `${r.errorCode}: ${r.error}` : '-') },
        ]}
      />
    </section>
  );
}
