import { useEffect, useState } from 'preact/hooks';
import type { FnOutput } from '../../../src/sdk/types.ts';
import { LogLines } from '../ansi.tsx';
import { fn } from '../api.ts';
import { ErrorNote, fmtDate, useLoad } from '../ui.tsx';

// What the project page shows about hosting: the plan's limits and what enforces them, a banner when apps
// run unsandboxed, and one deployment's view — its status, failure reason and build log (polled while the
// deployment is still on its way to live).

export type AppLimits = FnOutput<'getProjectForCli'>['appLimits'];
type AppRuntime = FnOutput<'getAppRuntimeForCli'>;
type DeploymentView = FnOutput<'getDeploymentForCli'>;
type LogLine = FnOutput<'getAppLogsForCli'>['lines'][number];

const IN_PROGRESS = new Set(['uploading', 'building', 'starting']);
const POLL_MS = 1000;

const mb = (n: number) => (n >= 1024 && n % 1024 === 0 ? `${n / 1024} GB` : `${n} MB`);
const ENFORCED: Record<AppRuntime['limitsEnforcedBy'], string> = {
  cgroups: 'enforced by cgroups',
  rlimits: 'enforced by rlimits (no cgroups)',
  none: 'not enforced',
  unknown: 'enforced by the node that runs apps',
};

/** The plan's limits of each app process, what enforces them, and the banner when the sandbox is off. */
export function AppLimitsPanel(props: { slug: string; limits: AppLimits }) {
  const { data: rt, error } = useLoad(
    () => fn<AppRuntime>('getAppRuntimeForCli', { projectSlug: props.slug }),
    [props.slug],
  );
  const l = props.limits;
  return (
    <section aria-labelledby="limits-title" class="block">
      {rt && !rt.sandbox ? (
        <p class="warning" role="alert" data-testid="sandbox-off">
          Apps on this Pier run without a sandbox (APP_SANDBOX=off): they run as Pier's own user, can read its
          data folder, and none of the limits below is enforced.
        </p>
      ) : null}
      <h2 id="limits-title">App limits</h2>
      <ErrorNote error={error} />
      <dl class="facts card" data-testid="app-limits">
        <dt>Plan</dt>
        <dd>{l.plan}</dd>
        <dt>Memory</dt>
        <dd>{mb(l.memoryMb)}</dd>
        <dt>Processes and threads</dt>
        <dd>{l.pids}</dd>
        <dt>Open files</dt>
        <dd>{l.openFiles.toLocaleString('en')}</dd>
        <dt>Disk (/data)</dt>
        <dd>{mb(l.diskMb)}</dd>
        <dt>CPU</dt>
        <dd>{l.cpuPercent / 100} core</dd>
        <dt>Enforcement</dt>
        <dd data-testid="limits-enforced">
          {rt ? (
            <>
              <strong>{ENFORCED[rt.limitsEnforcedBy]}</strong>
              <div class="hint">{rt.detail}</div>
            </>
          ) : (
            '…'
          )}
        </dd>
      </dl>
    </section>
  );
}

/** One deployment: status, failure reason and its own log lines, refreshed while it is in progress. */
export function DeploymentDetail(props: { slug: string; id: string; onChange?: () => void }) {
  const [d, setD] = useState<DeploymentView | null>(null);
  const [lines, setLines] = useState<LogLine[]>([]);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let afterId = 0;
    let seen: string | null = null;
    setD(null);
    setLines([]);
    const tick = async () => {
      try {
        const dep = await fn<DeploymentView>('getDeploymentForCli', { deploymentId: props.id });
        const got = await fn<FnOutput<'getAppLogsForCli'>>('getAppLogsForCli', {
          projectSlug: props.slug,
          deploymentId: props.id,
          limit: 1000,
          ...(afterId ? { afterId } : {}),
        });
        if (!live) return;
        afterId = got.lines.at(-1)?.id ?? afterId;
        if (got.lines.length) setLines((ls) => [...ls, ...got.lines]);
        setD(dep);
        if (seen !== null && seen !== dep.status) props.onChange?.();
        seen = dep.status;
        if (IN_PROGRESS.has(dep.status)) timer = setTimeout(tick, POLL_MS);
      } catch (err) {
        if (live) setError(err);
      }
    };
    void tick();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [props.slug, props.id]);
  return (
    <section class="block card" data-testid="deployment-detail" aria-labelledby="deployment-title">
      <h3 id="deployment-title">
        Deployment <code>{props.id.slice(0, 8)}</code>{' '}
        {d ? (
          <span class={`status status-${d.status}`} data-testid="deployment-status">
            {d.status}
          </span>
        ) : null}
        {d && IN_PROGRESS.has(d.status) ? <span class="hint"> (live log)</span> : null}
      </h3>
      <ErrorNote error={error} />
      {d?.errorMessage ? (
        <pre class="error" data-testid="deployment-reason">
          {d.errorMessage}
        </pre>
      ) : null}
      {d ? (
        <p class="hint">
          Created {fmtDate(d.createdAt)}
          {d.liveAt ? `, live ${fmtDate(d.liveAt)}` : ''}
          {d.finishedAt ? `, ended ${fmtDate(d.finishedAt)}` : ''}
        </p>
      ) : null}
      {lines.length === 0 ? (
        <p class="empty">No log lines for this deployment yet.</p>
      ) : (
        <LogLines lines={lines} labelledBy="deployment-title" testId="deployment-log" />
      )}
    </section>
  );
}

export const deploymentInProgress = (status: string): boolean => IN_PROGRESS.has(status);
