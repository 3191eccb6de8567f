import { useState } from 'preact/hooks';
import { fn } from '../api.ts';
import { fmtDate } from '../ui.tsx';
import { type Env, fmtCredits, type RunView, type StepState } from './workflows-types.ts';

// The run page's step details: per step its status, duration, attempts and last error, a table of every
// attempt (its start, duration, outcome and own error), a loop's per-item progress, a wait (what it waits
// for, until when, its approval link), the input the latest attempt was given (templates filled), the
// step's definition as the run started it, and its output — the first characters, the whole as a download.

function duration(st: StepState | undefined): string {
  if (!st?.startedAt) return '—';
  const end = st.completedAt ? Date.parse(st.completedAt) : Date.now();
  const ms = Math.max(0, end - Date.parse(st.startedAt));
  return ms < 1000
    ? `${ms} ms`
    : ms < 120_000
      ? `${(ms / 1000).toFixed(1)} s`
      : `${Math.round(ms / 60_000)} min`;
}

function ms(n: number | null): string {
  if (n === null) return '—';
  return n < 1000 ? `${n} ms` : n < 120_000 ? `${(n / 1000).toFixed(1)} s` : `${Math.round(n / 60_000)} min`;
}

const OUTCOME: Record<string, string> = {
  running: 'running',
  completed: 'completed',
  failed: 'failed',
  retrying: 'failed, retried',
  interrupted: 'worker stopped',
};

function Attempts({ rows }: { rows: RunView['stepDetails'][number]['attempts'] }) {
  if (!rows.length) return null;
  return (
    <table class="wf-attempts" aria-label="Attempts" data-testid="step-attempts">
      <thead>
        <tr>
          <th>Attempt</th>
          <th>Started</th>
          <th>Duration</th>
          <th>Outcome</th>
          <th>Error</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((a, i) => (
          <tr key={String(i)}>
            <td>{a.attempt}</td>
            <td>{fmtDate(a.startedAt)}</td>
            <td>{a.outcome === 'running' ? 'running' : ms(a.durationMs)}</td>
            <td>{OUTCOME[a.outcome] ?? a.outcome}</td>
            <td>{a.error ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function pretty(preview: string, truncated: boolean): string {
  if (truncated) return `${preview}…`;
  try {
    return JSON.stringify(JSON.parse(preview), null, 2);
  } catch {
    return preview;
  }
}

function WaitLine({ st }: { st: StepState }) {
  const w = st.wait;
  if (!w) return null;
  const what =
    w.kind === 'sleep'
      ? `Sleeps until ${fmtDate(w.dueAt)}`
      : w.kind === 'event'
        ? `Waits for event ${w.event}${w.dueAt ? ` (times out ${fmtDate(w.dueAt)})` : ''}`
        : `Waits for an approval${w.dueAt ? ` (times out ${fmtDate(w.dueAt)})` : ''}`;
  return (
    <p data-testid="step-wait">
      {st.status === 'waiting'
        ? what
        : `${w.kind} wait${w.decidedAt ? `, decided ${fmtDate(w.decidedAt)}` : ''}`}
      {w.approvalUrl ? (
        <>
          {' · '}
          <a href={w.approvalUrl} target="_blank" rel="noreferrer">
            Open the approval page
          </a>
        </>
      ) : null}
    </p>
  );
}

export function StepDetails(props: { view: RunView; orgSlug: string; env: Env }) {
  const { view } = props;
  const [err, setErr] = useState<string | null>(null);
  const download = async (stepId: string) => {
    setErr(null);
    try {
      const r = await fn<{ output: unknown }>('getWorkflowStepOutputForCli', {
        orgSlug: props.orgSlug,
        environment: props.env,
        runId: view.run.id,
        stepId,
      });
      const url = URL.createObjectURL(
        new Blob([JSON.stringify(r.output, null, 2)], { type: 'application/json' }),
      );
      const a = document.createElement('a');
      a.href = url;
      a.download = `${view.run.id}-${stepId}.json`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (e) {
      setErr(e instanceof Error ? e.message : String(e));
    }
  };
  return (
    <div>
      {err ? (
        <p class="error" role="alert">
          {err}
        </p>
      ) : null}
      {view.stepDetails.map((d) => {
        const st = view.run.stepStates[d.id];
        const step = view.steps.find((s) => s.id === d.id);
        const loop = st && st.totalItems !== null && st.totalItems !== undefined;
        return (
          <details class="wf-step" key={d.id} data-testid="step-detail" data-step={d.id}>
            <summary>
              <strong>{d.id}</strong> <span class="muted">{step?.type}</span>{' '}
              <span class={`wf-status wf-${st?.status ?? 'pending'}`}>{st?.status ?? 'pending'}</span>{' '}
              <span class="muted">
                {`${duration(st)} · ${st?.attempts ?? 0} attempt(s)${st?.crashRecoveries ? ` · ${st.crashRecoveries} crash recovery(ies)` : ''} · ${fmtCredits(st?.creditsUsed ?? 0)} credits`}
              </span>
            </summary>
            {st?.lastError ? (
              <p class="warning" data-testid="step-error">{`Last attempt's error: ${st.lastError}`}</p>
            ) : null}
            {loop ? (
              <p data-testid="step-loop">
                <progress max={st.totalItems ?? 0} value={st.completedItems ?? 0} />{' '}
                {`${st.completedItems ?? 0} of ${st.totalItems} items done`}
              </p>
            ) : null}
            {st ? <WaitLine st={st} /> : null}
            <Attempts rows={d.attempts} />
            {d.inputPreview === null ? null : (
              <>
                <h3>Input</h3>
                <pre class="wf-output" data-testid="step-input">
                  {pretty(d.inputPreview, d.inputTruncated)}
                </pre>
              </>
            )}
            <h3>Definition</h3>
            <pre class="wf-output">{JSON.stringify(d.definition, null, 2)}</pre>
            <h3>Output</h3>
            {d.outputPreview === null ? (
              <p class="muted">No output yet.</p>
            ) : (
              <>
                <pre class="wf-output" data-testid="step-output">
                  {pretty(d.outputPreview, d.outputTruncated)}
                </pre>
                {d.outputTruncated ? (
                  <button type="button" onClick={() => download(d.id)} data-testid="step-download">
                    {`Download the whole output (${Math.ceil(d.outputBytes / 1024)} KB)`}
                  </button>
                ) : null}
              </>
            )}
          </details>
        );
      })}
    </div>
  );
}
