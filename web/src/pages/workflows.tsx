import { useState } from 'preact/hooks';
import { fn, type Org } from '../api.ts';
import { curlPost, keyKind, NextStep } from '../components/next-step.tsx';
import { EnvSwitch, ErrorNote, fmtDate, Link, Page, useLoad } from '../ui.tsx';
import { type Env, fmtCredits, runHref, type WorkflowItem } from './workflows-types.ts';
import './memory.css';
import './workflows.css';
import { AreaUsage, WorkflowUsage } from './usage.tsx';

// Workflows: an organization's workflows in one environment with their latest runs, each run a link to its
// page (timeline, graph, output). Read-only; see docs/workflows.md.

export function WorkflowsPage(props: { org: Org }) {
  const [environment, setEnvironment] = useState<Env>('production');
  const key = `${props.org.slug}/${environment}`;
  const list = useLoad(
    async () => ({
      key,
      items: (
        await fn<{ items: WorkflowItem[] }>('listWorkflowsForCli', { orgSlug: props.org.slug, environment })
      ).items,
    }),
    [key],
  );
  const items = list.data?.key === key ? list.data.items : undefined;
  return (
    <Page title="Workflows" intro={`The workflows of ${props.org.name} and their recent runs.`}>
      <AreaUsage>
        <WorkflowUsage org={props.org} />
      </AreaUsage>
      <EnvSwitch value={environment} onChange={setEnvironment} />
      <ErrorNote error={list.error} />
      {!items && !list.error ? (
        <p class="loading-note" role="status">
          Loading…
        </p>
      ) : null}
      {items && !items.length ? (
        <NextStep
          testId="workflows-empty"
          what={`No workflows in ${environment} yet. Create one in a project with a ${keyKind(environment)} API key (your project's slug in projectSlug), then run it with POST /v1/workflows/{id}/run:`}
          command={curlPost('/workflows', { projectSlug: 'my-project', slug: 'hello', name: 'Hello' })}
        />
      ) : null}
      {items?.map((w) => (
        <section class="wf-card" key={w.id} data-testid="workflow">
          <h2>
            {w.name} <span class="muted">{`${w.projectSlug}/${w.slug} · ${w.steps.length} steps`}</span>
          </h2>
          {w.description ? <p>{w.description}</p> : null}
          <Triggers item={w} env={environment} />
          {w.recentRuns.length ? (
            <table>
              <thead>
                <tr>
                  <th>Run</th>
                  <th>Status</th>
                  <th>Started</th>
                  <th>Credits</th>
                </tr>
              </thead>
              <tbody>
                {w.recentRuns.map((r) => (
                  <tr key={r.id}>
                    <td>
                      <Link href={runHref(r.id, environment)}>{r.id.slice(0, 8)}</Link>
                    </td>
                    <td>
                      <span class={`wf-status wf-${r.status}`}>{r.status}</span>
                    </td>
                    <td>{fmtDate(r.startedAt ?? r.createdAt)}</td>
                    <td>{fmtCredits(r.creditsUsed)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p class="muted">No runs yet.</p>
          )}
        </section>
      ))}
    </Page>
  );
}

type Fire = WorkflowItem['triggerHistory']['webhook']['lastFires'][number];

/** A trigger's latest fires, newest first: what each did, with a link to the run it started. */
function Fires(props: { fires: Fire[]; env: Env }) {
  if (!props.fires.length) return <span class="muted"> · never fired</span>;
  return (
    <span>
      {props.fires.slice(0, 5).map((f) => (
        <span key={f.firedAt + (f.runId ?? '')} title={f.detail ?? ''} data-testid="trigger-fire">
          {' · '}
          {f.runId ? (
            <Link href={runHref(f.runId, props.env)}>{fmtDate(f.firedAt)}</Link>
          ) : (
            fmtDate(f.firedAt)
          )}{' '}
          <span class="muted">{f.runStatus ?? f.outcome}</span>
        </span>
      ))}
    </span>
  );
}

function Triggers(props: { item: WorkflowItem; env: Env }) {
  const h = props.item.triggerHistory;
  if (!h.schedules.length && !h.events.length && !h.webhook.enabled) return null;
  return (
    <ul class="wf-triggers" data-testid="workflow-triggers">
      {h.schedules.map((s) => (
        <li key={`${s.cron}@${s.timezone}`}>
          {`Schedule ${s.cron} (${s.timezone}, overlap ${s.overlap}) · next ${fmtDate(s.nextRunAt)}`}
          <Fires fires={s.lastFires} env={props.env} />
        </li>
      ))}
      {h.events.map((e) => (
        <li key={e.name}>
          {`Event ${e.name}${e.filters.some((f) => f) ? ' (filtered)' : ''}`}
          <Fires fires={e.lastFires} env={props.env} />
        </li>
      ))}
      {h.webhook.enabled ? (
        <li>
          Inbound webhook
          <Fires fires={h.webhook.lastFires} env={props.env} />
        </li>
      ) : null}
    </ul>
  );
}
