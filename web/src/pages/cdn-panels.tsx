import { useEffect, useState } from 'preact/hooks';
import { fn, type Org } from '../api.ts';
import { ConfirmButton, CopyButton, ErrorNote, fmtDate, useLoad } from '../ui.tsx';
import { type AssetWithPreview, type CdnScope, fmtBytes, type MergePage, type Usage } from './cdn-types.ts';

// The Assets page's side panels: one asset's details, storage usage as SVG bars by type, merge jobs with
// live progress, and the organization's webhook signing secret.

export function AssetDetail(props: { scope: CdnScope; assetId: string; onClose: () => void }) {
  const { data, error } = useLoad(
    () =>
      fn<AssetWithPreview>('getCdnAssetForCli', {
        ...props.scope,
        assetId: props.assetId,
      }),
    [props.assetId, props.scope.environment],
  );
  return (
    <section class="cdn-detail" aria-labelledby="cdn-detail-title" data-testid="asset-detail">
      <h2 id="cdn-detail-title">{data?.filename ?? 'Asset'}</h2>
      <button type="button" class="secondary" onClick={props.onClose}>
        Close
      </button>
      <ErrorNote error={error} />
      {data ? (
        <>
          {data.previewUrl ? <img class="cdn-preview" src={data.previewUrl} alt={data.filename} /> : null}
          <p class="cdn-url">
            <code data-copy={data.cdnUrl}>{data.cdnUrl}</code>{' '}
            <CopyButton value={data.cdnUrl} label="Copy URL" />
          </p>
          <dl class="cdn-meta">
            <dt>Type</dt>
            <dd>
              {data.type} ({data.mimeType}
              {data.declaredMimeType !== data.mimeType ? `, declared ${data.declaredMimeType}` : ''})
            </dd>
            <dt>Size</dt>
            <dd>{fmtBytes(data.size)}</dd>
            <dt>Status</dt>
            <dd>
              {data.status}
              {data.error ? `: ${data.error}` : ''}
            </dd>
            {data.width ? (
              <>
                <dt>Dimensions</dt>
                <dd data-testid="asset-dimensions">
                  {data.width} × {data.height}
                </dd>
              </>
            ) : null}
            {data.duration != null ? (
              <>
                <dt>Duration</dt>
                <dd>
                  {data.duration.toFixed(2)} s {data.videoCodec ?? ''} {data.audioCodec ?? ''}
                </dd>
              </>
            ) : null}
            <dt>Folder</dt>
            <dd>{data.folder || '(none)'}</dd>
            <dt>Project</dt>
            <dd>{data.projectSlug ?? '—'}</dd>
            <dt>Uploaded</dt>
            <dd>{fmtDate(data.confirmedAt ?? data.createdAt)}</dd>
            <dt>Metadata</dt>
            <dd>
              <pre>{JSON.stringify(data.metadata, null, 2)}</pre>
            </dd>
          </dl>
        </>
      ) : null}
    </section>
  );
}

export function UsageChart(props: { usage: Usage | undefined; error: unknown }) {
  const u = props.usage;
  const rows = u ? Object.entries(u.byType).sort((a, b) => b[1].bytes - a[1].bytes) : [];
  const max = Math.max(1, ...rows.map(([, s]) => s.bytes));
  const barH = 22;
  return (
    <section class="cdn-usage" aria-labelledby="cdn-usage-title">
      <h2 id="cdn-usage-title">Storage</h2>
      <ErrorNote error={props.error} />
      {u ? (
        <>
          <p data-testid="usage-total">
            {u.totalFormatted} in {u.objectCount} {u.objectCount === 1 ? 'object' : 'objects'} (originals{' '}
            {u.breakdown.originals.bytesFormatted}, derived {u.breakdown.derived.bytesFormatted})
          </p>
          {rows.length ? (
            <svg
              class="usage-chart"
              data-testid="usage-chart"
              role="img"
              aria-label={`Storage by type: ${rows.map(([t, s]) => `${t} ${s.bytesFormatted}`).join(', ')}`}
              viewBox={`0 0 400 ${rows.length * (barH + 8)}`}
              width="100%"
            >
              {rows.map(([type, s], i) => {
                const y = i * (barH + 8);
                const w = Math.max(2, (s.bytes / max) * 220);
                return (
                  <g key={type} data-type={type}>
                    <text x="0" y={y + 15}>
                      {type}
                    </text>
                    <rect x="70" y={y} width={w} height={barH} rx="3" class={`bar bar-${type}`} />
                    <text x={78 + w} y={y + 15}>
                      {s.bytesFormatted} ({s.objectCount})
                    </text>
                  </g>
                );
              })}
            </svg>
          ) : (
            <p>Nothing stored yet.</p>
          )}
        </>
      ) : null}
    </section>
  );
}

const RUNNING = new Set(['pending', 'queued', 'processing']);

/** Merge jobs, refreshed every 2 s while one is still running (not while the tab is hidden). */
export function MergeJobs(props: { scope: CdnScope }) {
  const merges = useLoad(
    () => fn<MergePage>('listCdnMergesForCli', { ...props.scope, limit: 20 }),
    [props.scope.orgSlug, props.scope.environment],
  );
  const running = merges.data?.items.some((m) => RUNNING.has(m.status));
  useEffect(() => {
    if (!running) return;
    const id = setInterval(() => {
      if (!document.hidden) merges.reload();
    }, 2000);
    return () => clearInterval(id);
  }, [running]);
  const items = merges.data?.items ?? [];
  return (
    <section class="cdn-merges" aria-labelledby="cdn-merges-title">
      <h2 id="cdn-merges-title">Video merges</h2>
      <ErrorNote error={merges.error} />
      {merges.data && items.length === 0 ? <p>No merges yet (POST /v1/cdn/video/merge starts one).</p> : null}
      <ul class="merge-list">
        {items.map((m) => (
          <li key={m.id} data-testid="merge-job">
            <span class="merge-status">{m.status}</span>{' '}
            <progress max={100} value={m.progress} aria-label={`Merge ${m.id} progress`} /> {m.progress}%{' '}
            <span class="muted">
              {m.projectSlug} · {fmtDate(m.createdAt)}
            </span>
            {m.outputAsset ? (
              <>
                {' '}
                <a href={m.outputAsset.cdnUrl}>output</a> ({fmtBytes(m.outputAsset.size)})
              </>
            ) : null}
            {m.error ? <span class="error"> {m.error}</span> : null}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The secret merge webhooks are signed with (Standard Webhooks); owners and admins only. */
export function WebhookSecret(props: { org: Org }) {
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  if (props.org.role === 'member') return null;
  const call = async (name: string) => {
    setError(null);
    try {
      setSecret((await fn<{ secret: string }>(name, { orgSlug: props.org.slug })).secret);
    } catch (e) {
      setError(e);
    }
  };
  return (
    <section class="cdn-secret" aria-labelledby="cdn-secret-title">
      <h2 id="cdn-secret-title">Webhook signing secret</h2>
      <p class="muted">Verifies merge completion webhooks (Standard Webhooks). One per organization.</p>
      {secret ? (
        <p>
          <code data-copy={secret} data-testid="webhook-secret">
            {secret}
          </code>{' '}
          <CopyButton value={secret} />
        </p>
      ) : (
        <button type="button" class="secondary" onClick={() => call('getWebhookSecretForCli')}>
          Show secret
        </button>
      )}{' '}
      <ConfirmButton
        label="Rotate"
        confirm="Deliveries signed with the old secret will stop verifying."
        onConfirm={() => call('rotateWebhookSecretForCli')}
      />
      <ErrorNote error={error} />
    </section>
  );
}
