import { useEffect, useState } from 'preact/hooks';
import type { FnOutput } from '../../../src/sdk/types.ts';
import { LogLines } from '../ansi.tsx';
import { fn } from '../api.ts';
import { NextStep } from '../components/next-step.tsx';
import { ErrorNote, fmtDate, useLoad } from '../ui.tsx';
import { DeploymentDetail, deploymentInProgress } from './project-hosting.tsx';

// The project's deployments (newest first) with Redeploy and Roll back, and the app's live log: polled every
// LOG_POLL_MS from the last line seen, build and runtime output apart.

type Deployment = FnOutput<'listDeploymentsForCli'>[number];
type LogLine = FnOutput<'getAppLogsForCli'>['lines'][number];

const LOG_POLL_MS = 2000;
const KEEP_LINES = 1000;

const secs = (ms: number | null) => (ms === null ? '' : `${(ms / 1000).toFixed(1)} s`);

export function Deployments(props: { slug: string; canWrite: boolean }) {
  const { data, error, reload } = useLoad(
    () => fn<Deployment[]>('listDeploymentsForCli', { projectSlug: props.slug, limit: 20 }),
    [props.slug],
  );
  const [picked, setPicked] = useState<string | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  // The newest deployment opens by itself while it is on its way to live, so its build log shows live; it
  // stays open once it ends (live or failed, with the reason).
  const newest = data?.[0];
  const auto = newest && deploymentInProgress(newest.status) ? newest.id : null;
  useEffect(() => {
    if (auto) setPicked(auto);
  }, [auto]);
  const open = picked ?? auto;
  const act = async (name: 'rollbackDeploymentForCli' | 'redeployDeploymentForCli', id: string) => {
    setActionError(null);
    try {
      const d = await fn<Deployment>(name, { projectSlug: props.slug, deploymentId: id });
      setPicked(d.id);
      reload();
    } catch (err) {
      setActionError(err);
    }
  };
  const busy = data?.some((d) => deploymentInProgress(d.status)) ?? false;
  return (
    <section aria-labelledby="deployments-title" class="block">
      <h2 id="deployments-title">Deployments</h2>
      <ErrorNote error={error} />
      <ErrorNote error={actionError} />
      {data === undefined ? null : data.length === 0 ? (
        <NextStep
          testId="deployments-empty"
          what="No deployments yet. Deploy the app in the current folder with:"
          command={`npx pier deploy . --project ${props.slug}`}
        />
      ) : (
        <table aria-label="Deployments">
          <thead>
            <tr>
              <th scope="col">Deployment</th>
              <th scope="col">Status</th>
              <th scope="col">Kind</th>
              <th scope="col">Build</th>
              <th scope="col">By</th>
              <th scope="col">Created</th>
              {props.canWrite ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {data.map((d) => (
              <tr key={d.id} data-testid={`deployment-${d.id}`}>
                <td data-label="Deployment">
                  <button
                    type="button"
                    class="link"
                    aria-pressed={open === d.id}
                    aria-label={`Show deployment ${d.id.slice(0, 8)}`}
                    onClick={() => setPicked(d.id)}
                  >
                    <code>{d.id.slice(0, 8)}</code>
                  </button>
                  {d.sourceId ? (
                    <div class="hint">
                      {d.origin} of <code>{d.sourceId.slice(0, 8)}</code>
                    </div>
                  ) : null}
                </td>
                <td data-label="Status">
                  <span class={`status status-${d.status}`}>{d.status}</span>
                  {d.errorMessage ? <div class="error">{d.errorMessage}</div> : null}
                </td>
                <td data-label="Kind">{d.kind ?? '—'}</td>
                <td data-label="Build">{secs(d.buildMs) || '—'}</td>
                <td data-label="By">{d.deployedBy}</td>
                <td data-label="Created">{fmtDate(d.createdAt)}</td>
                {props.canWrite ? (
                  <td data-label="Actions">
                    {d.status === 'superseded' && d.buildKept ? (
                      <button
                        type="button"
                        disabled={busy}
                        title="Run this deployment's kept build again, with no build step"
                        onClick={() => act('rollbackDeploymentForCli', d.id)}
                      >
                        Roll back
                      </button>
                    ) : null}{' '}
                    {d.status !== 'uploading' ? (
                      <button
                        type="button"
                        class="secondary"
                        disabled={busy}
                        title="Build this deployment's uploaded files again and deploy them"
                        onClick={() => act('redeployDeploymentForCli', d.id)}
                      >
                        Redeploy
                      </button>
                    ) : null}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {open ? <DeploymentDetail key={open} slug={props.slug} id={open} onChange={reload} /> : null}
      {data?.length ? <AppLogs slug={props.slug} /> : null}
    </section>
  );
}

/** The app's log, following new lines as they come; Build / Runtime keep the two apart. */
function AppLogs(props: { slug: string }) {
  const [phase, setPhase] = useState<'' | 'build' | 'runtime'>('');
  const [lines, setLines] = useState<LogLine[]>([]);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let afterId = 0;
    setLines([]);
    const tick = async () => {
      try {
        const got = await fn<FnOutput<'getAppLogsForCli'>>('getAppLogsForCli', {
          projectSlug: props.slug,
          ...(phase ? { phase } : {}),
          ...(afterId ? { afterId, limit: 1000 } : { limit: 200 }),
        });
        if (!live) return;
        setError(null);
        afterId = got.lines.at(-1)?.id ?? afterId;
        if (got.lines.length) setLines((ls) => [...ls, ...got.lines].slice(-KEEP_LINES));
      } catch (err) {
        // A lost connection shows, and the next tick resumes from the last line seen.
        if (live) setError(err);
      }
      if (live) timer = setTimeout(tick, LOG_POLL_MS);
    };
    void tick();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [props.slug, phase]);
  return (
    <div class="block">
      <h3 id="logs-title">Logs</h3>
      <fieldset class="log-filter">
        <legend class="sr-only">Which logs</legend>
        {(
          [
            ['', 'All'],
            ['build', 'Build'],
            ['runtime', 'Runtime'],
          ] as const
        ).map(([value, label]) => (
          <button
            key={value}
            type="button"
            class={phase === value ? '' : 'secondary'}
            aria-pressed={phase === value}
            onClick={() => setPhase(value)}
          >
            {label}
          </button>
        ))}
        <span class="hint">live, every {LOG_POLL_MS / 1000} s</span>
      </fieldset>
      <ErrorNote error={error} />
      {lines.length === 0 ? (
        <p class="empty">No log lines yet.</p>
      ) : (
        <LogLines lines={lines} labelledBy="logs-title" testId="app-logs" />
      )}
    </div>
  );
}
