import { useEffect } from 'preact/hooks';
import { fn, type Org } from '../api.ts';
import { ErrorNote, fmtDate, Link, Page, useLoad } from '../ui.tsx';
import { StepDetails } from './workflow-steps.tsx';
import { type Env, fmtCredits, type RunView, type StepState } from './workflows-types.ts';
import './workflows.css';

// One run: a timeline (a bar per step from start to end, coloured by status), the steps' graph as the run
// started it, and the output. Refreshed every second while the run is not finished.

const LIVE = ['pending', 'running'];

export function WorkflowRunPage(props: { org: Org; runId: string; env: Env }) {
  const key = `${props.org.slug}/${props.env}/${props.runId}`;
  const view = useLoad(
    async () => ({
      key,
      v: await fn<RunView>('getWorkflowRunViewForCli', {
        orgSlug: props.org.slug,
        environment: props.env,
        runId: props.runId,
      }),
    }),
    [key],
  );
  const data = view.data?.key === key ? view.data.v : undefined;
  const live = !!data && LIVE.includes(data.run.status);
  useEffect(() => {
    if (!live) return;
    const timer = setInterval(view.reload, 1000);
    return () => clearInterval(timer);
  }, [live, key]);

  return (
    <Page title={data?.workflow ? `Run of ${data.workflow.name}` : 'Workflow run'}>
      <p>
        <Link href="/workflows">All workflows</Link>
      </p>
      <ErrorNote error={view.error} />
      {!data && !view.error ? (
        <p class="loading-note" role="status">
          Loading…
        </p>
      ) : null}
      {data ? (
        <>
          <p data-testid="run-status">
            <span class={`wf-status wf-${data.run.status}`}>{data.run.status}</span>{' '}
            {`${data.run.completedSteps}/${data.run.totalSteps} steps · ${fmtCredits(data.run.creditsUsed)} credits · started ${fmtDate(data.run.startedAt)}${data.run.trigger.type === 'api' ? '' : ` · by ${data.run.trigger.type}${data.run.trigger.ref ? ` ${data.run.trigger.ref}` : ''}`}${data.run.queued ? ` · queued behind concurrency key '${data.run.concurrencyKey ?? ''}'` : ''}`}
          </p>
          {data.run.error ? <p class="warning">{data.run.error}</p> : null}
          <h2>Timeline</h2>
          <Timeline view={data} />
          <h2>Steps</h2>
          <StepDetails view={data} orgSlug={props.org.slug} env={props.env} />
          <h2>Graph</h2>
          <Graph view={data} />
          <h2>Output</h2>
          <pre class="wf-output" data-testid="run-output">
            {JSON.stringify(data.run.output, null, 2)}
          </pre>
        </>
      ) : null}
    </Page>
  );
}

const ms = (iso: string | null) => (iso ? Date.parse(iso) : null);
/** A step of a cancelled run that never finished reads as cancelled, not as still waiting. */
const statusOf = (st: StepState | undefined, runStatus: string) =>
  runStatus === 'cancelled' && (!st || !['completed', 'failed', 'skipped'].includes(st.status))
    ? 'cancelled'
    : (st?.status ?? 'pending');

function Timeline({ view }: { view: RunView }) {
  const now = Date.now();
  const states = view.run.stepStates;
  const starts = view.steps
    .map((s) => ms(states[s.id]?.startedAt ?? null))
    .filter((x): x is number => x !== null);
  const t0 = Math.min(...starts, ms(view.run.startedAt) ?? now);
  const ends = view.steps.map(
    (s) => ms(states[s.id]?.completedAt ?? null) ?? (states[s.id]?.startedAt ? now : t0),
  );
  const t1 = Math.max(...ends, ms(view.run.completedAt) ?? t0, t0 + 1);
  const LABEL = 120;
  const W = 480;
  const INFO = 280;
  const ROW = 26;
  const x = (t: number) => LABEL + ((t - t0) / (t1 - t0)) * W;
  return (
    <svg
      class="wf-svg"
      viewBox={`0 0 ${LABEL + W + INFO} ${view.steps.length * ROW + 4}`}
      width={LABEL + W + INFO}
      role="img"
      aria-label="Timeline of the run's steps"
      data-testid="timeline"
    >
      {view.steps.map((s, i) => {
        const st = states[s.id];
        const status = statusOf(st, view.run.status);
        const a = ms(st?.startedAt ?? null);
        const b = ms(st?.completedAt ?? null) ?? (a !== null ? now : null);
        const left = a === null ? LABEL : x(a);
        const width = a === null || b === null ? 2 : Math.max(2, x(b) - x(a));
        const info = `${status} · ${st?.attempts ?? 0} attempt(s) · ${fmtCredits(st?.creditsUsed ?? 0)} credits`;
        return (
          <g key={s.id} data-testid="timeline-bar" data-step={s.id} data-status={status}>
            <title>{`${s.id}: ${info}${a !== null && b !== null ? ` · ${b - a} ms` : ''}${st?.lastError ? ` · ${st.lastError}` : ''}`}</title>
            <text x={0} y={i * ROW + 17}>
              {s.id}
            </text>
            <rect class={`wf-${status}`} x={left} y={i * ROW + 4} width={width} height={ROW - 8} rx={3} />
            <text x={LABEL + W + 8} y={i * ROW + 17}>
              {info}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

/** Columns by dependency depth (a step sits one column right of its deepest dependency). */
function layout(steps: RunView['steps']) {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const depth = new Map<string, number>();
  const depthOf = (id: string, seen: Set<string>): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    if (seen.has(id)) return 0; // definitions are checked acyclic; guard anyway
    seen.add(id);
    const deps = byId.get(id)?.dependsOn.filter((d) => byId.has(d)) ?? [];
    const d = deps.length ? 1 + Math.max(...deps.map((x) => depthOf(x, seen))) : 0;
    depth.set(id, d);
    return d;
  };
  const rows = new Map<number, number>();
  const pos = new Map<string, { col: number; row: number }>();
  for (const s of steps) {
    const col = depthOf(s.id, new Set());
    const row = rows.get(col) ?? 0;
    rows.set(col, row + 1);
    pos.set(s.id, { col, row });
  }
  return { pos, cols: Math.max(0, ...rows.keys()) + 1, rows: Math.max(1, ...rows.values()) };
}

function Graph({ view }: { view: RunView }) {
  const { pos, cols, rows } = layout(view.steps);
  const BW = 170;
  const BH = 40;
  const GX = 50;
  const GY = 16;
  const at = (id: string) => {
    const p = pos.get(id)!;
    return { x: 4 + p.col * (BW + GX), y: 4 + p.row * (BH + GY) };
  };
  return (
    <svg
      class="wf-svg"
      viewBox={`0 0 ${cols * (BW + GX) + 8} ${rows * (BH + GY) + 8}`}
      width={cols * (BW + GX) + 8}
      role="img"
      aria-label="The workflow's steps and their dependencies"
      data-testid="graph"
    >
      <defs>
        <marker
          id="wf-arrow"
          viewBox="0 0 10 10"
          refX="10"
          refY="5"
          markerWidth="7"
          markerHeight="7"
          orient="auto"
        >
          <path d="M0,0 L10,5 L0,10 z" fill="#556" />
        </marker>
      </defs>
      {view.steps.flatMap((s) =>
        s.dependsOn
          .filter((d) => pos.has(d))
          .map((d) => {
            const from = at(d);
            const to = at(s.id);
            return (
              <line
                key={`${d}->${s.id}`}
                data-testid="graph-edge"
                x1={from.x + BW}
                y1={from.y + BH / 2}
                x2={to.x}
                y2={to.y + BH / 2}
                stroke="#556"
                marker-end="url(#wf-arrow)"
              />
            );
          }),
      )}
      {view.steps.map((s) => {
        const p = at(s.id);
        const status = statusOf(view.run.stepStates[s.id], view.run.status);
        return (
          <g key={s.id} class="wf-node" data-testid="graph-node">
            <title>{`${s.id} (${s.type}): ${status}`}</title>
            <rect x={p.x} y={p.y} width={BW} height={BH} rx={6} class={`wf-stroke-${status}`} />
            <text x={p.x + 8} y={p.y + 17}>
              {s.id.length > 16 ? `${s.id.slice(0, 15)}…` : s.id}
            </text>
            <text x={p.x + 8} y={p.y + 32} class="muted">
              {`${s.type} · ${status}`}
            </text>
          </g>
        );
      })}
    </svg>
  );
}
