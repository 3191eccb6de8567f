import { useEffect, useRef } from 'preact/hooks';
import { fn } from '../api.ts';
import { ErrorNote, fmtDate, useLoad } from '../ui.tsx';
import { Lineage } from './memory-lineage.tsx';
import { fmtScore, type MemoryDetail, type MemoryScope } from './memory-types.ts';

// One memory: its full content, facts, tags, metadata as JSON, and its earlier versions.

export function MemoryDetailPanel(props: { scope: MemoryScope; memoryId: string; onClose: () => void }) {
  const { scope, memoryId } = props;
  const { data, error } = useLoad(
    () => fn<MemoryDetail>('getMemoryForCli', { ...scope, memoryId }),
    [scope.orgSlug, scope.environment, memoryId],
  );
  const heading = useRef<HTMLHeadingElement>(null);
  // Opening a memory moves the focus to it, so keyboard and screen-reader users land on what they opened.
  useEffect(() => {
    if (data) heading.current?.focus();
  }, [data?.memory.id]);
  const m = data?.memory;
  return (
    <section class="card memory-detail" aria-labelledby="memory-detail-title" data-testid="memory-detail">
      <div class="row spread">
        <h2 id="memory-detail-title" tabIndex={-1} ref={heading}>
          Memory
        </h2>
        <button type="button" class="secondary" onClick={props.onClose}>
          Close
        </button>
      </div>
      <ErrorNote error={error} />
      {!m ? (
        error ? null : (
          <p class="loading-note" role="status">
            Loading…
          </p>
        )
      ) : (
        <>
          <p class="memory-content" data-testid="memory-content">
            {m.content}
          </p>
          <Lineage memory={m} />
          <dl class="facts">
            <dt>Type</dt>
            <dd>{m.type}</dd>
            <dt>Tier</dt>
            <dd>
              <span class={`tier tier-${m.tier}`}>{m.tier}</span>
            </dd>
            <dt>Confidence</dt>
            <dd>{fmtScore(m.confidence)}</dd>
            <dt>Recalled</dt>
            <dd>
              {m.accessCount} {m.accessCount === 1 ? 'time' : 'times'}
              {m.lastAccessedAt ? `, last ${fmtDate(m.lastAccessedAt)}` : ''}
            </dd>
            <dt>Tags</dt>
            <dd>
              {m.tags.length ? (
                <ul class="tags">
                  {m.tags.map((t) => (
                    <li key={t}>{t}</li>
                  ))}
                </ul>
              ) : (
                '—'
              )}
            </dd>
            <dt>Created</dt>
            <dd>{fmtDate(m.createdAt)}</dd>
            <dt>Updated</dt>
            <dd>{fmtDate(m.updatedAt)}</dd>
            <dt>Embedding</dt>
            <dd>{m.embeddingModel}</dd>
            <dt>Id</dt>
            <dd>
              <code>{m.id}</code>
            </dd>
          </dl>
          <h3>Metadata</h3>
          <pre class="json" data-testid="memory-metadata">
            {JSON.stringify(m.metadata, null, 2)}
          </pre>
          <h3>History</h3>
          {data.history.length === 0 ? (
            <p class="empty">Never changed since it was stored.</p>
          ) : (
            <ol class="history" data-testid="memory-history">
              {data.history.map((h, i) => (
                // Entries of one memory.add call share their times: the position keeps keys apart.
                <li key={`${i}-${h.validTo}`}>
                  <p class="muted">
                    {fmtDate(h.validFrom)} – {fmtDate(h.validTo)} · {h.event}
                    {h.decision ? ` (${h.decision}${h.model ? `, ${h.model}` : ''})` : ''} · {h.type},{' '}
                    {h.tier}, {fmtScore(h.confidence)}
                  </p>
                  <p>{h.content}</p>
                  {h.reason ? <p class="muted small">Why: {h.reason}</p> : null}
                </li>
              ))}
            </ol>
          )}
        </>
      )}
    </section>
  );
}
