import { useState } from 'preact/hooks';
import { fn, type Org } from '../api.ts';
import { Pager } from '../table.tsx';
import { EnvSwitch, ErrorNote, Page, useLoad } from '../ui.tsx';
import { AssetDetail, MergeJobs, UsageChart, WebhookSecret } from './cdn-panels.tsx';
import { ASSET_TYPES, type AssetPage, type CdnScope, type Env, fmtBytes, type Usage } from './cdn-types.ts';
import { UploadZone } from './cdn-upload.tsx';
import './cdn.css';
import { NextStep } from '../components/next-step.tsx';
import { AreaUsage, CdnUsage } from './usage.tsx';

// Assets: the CDN of one organization in one environment (production = live keys, sandbox = test keys):
// a grid of thumbnails (signed transform URLs) filtered by folder and type, an asset's details with its
// URL, uploads by drag and drop, storage by type, merge jobs and the webhook secret. See docs/cdn.md.

const LIMIT = 48;

export function CdnPage(props: { org: Org }) {
  const [environment, setEnvironment] = useState<Env>('production');
  const [folder, setFolder] = useState<string | null>(null);
  const [type, setType] = useState<string>('');
  const [offset, setOffset] = useState(0);
  const [openId, setOpenId] = useState<string | null>(null);
  const scope: CdnScope = { orgSlug: props.org.slug, environment };
  const key = `${props.org.slug}/${environment}/${folder ?? '*'}/${type}/${offset}`;
  const assets = useLoad(
    () =>
      fn<AssetPage>('listCdnAssetsForCli', {
        ...scope,
        ...(folder !== null ? { folder } : {}),
        ...(type ? { type } : {}),
        limit: LIMIT,
        offset,
      }),
    [key],
  );
  const usage = useLoad(() => fn<Usage>('getCdnStorageUsageForCli', scope), [props.org.slug, environment]);
  const refresh = () => {
    assets.reload();
    usage.reload();
  };
  const filter = (f: () => void) => {
    f();
    setOffset(0);
    setOpenId(null);
  };
  const data = assets.data;

  return (
    <Page
      title="Assets"
      intro={`Files ${props.org.name} stores on Pier's CDN. Live API keys store into production, test keys into the sandbox.`}
    >
      <AreaUsage>
        <CdnUsage org={props.org} />
      </AreaUsage>
      <EnvSwitch
        value={environment}
        onChange={(e) => filter(() => setEnvironment(e))}
        name="cdn-environment"
      />
      <div class="cdn-layout">
        <div class="cdn-main">
          <UploadZone
            key={environment}
            scope={scope}
            folder={folder ?? ''}
            onUploaded={(a) => {
              refresh();
              setOpenId(a.assetId);
            }}
          />
          <div class="cdn-filters">
            <label>
              Folder
              <select
                aria-label="Folder"
                value={folder ?? '*'}
                onChange={(e) => {
                  const v = (e.target as HTMLSelectElement).value;
                  filter(() => setFolder(v === '*' ? null : v));
                }}
              >
                <option value="*">All folders</option>
                {(data?.folders ?? []).map((f) => (
                  <option key={f} value={f}>
                    {f || '(no folder)'}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Type
              <select
                aria-label="Type"
                value={type}
                onChange={(e) => filter(() => setType((e.target as HTMLSelectElement).value))}
              >
                <option value="">All types</option>
                {ASSET_TYPES.map((t) => (
                  <option key={t} value={t}>
                    {t}
                  </option>
                ))}
              </select>
            </label>
          </div>
          <ErrorNote error={assets.error} />
          {data && data.items.length === 0 ? (
            <NextStep
              testId="assets-empty"
              what="No assets here yet. Upload one with:"
              command={`npx pier cdn upload ./photo.png --org ${props.org.slug}${environment === 'sandbox' ? ' --env sandbox' : ''}`}
            />
          ) : null}
          <ul class="asset-grid" data-testid="asset-grid">
            {(data?.items ?? []).map((a) => (
              <li key={a.assetId}>
                <button
                  type="button"
                  class={`asset-card${openId === a.assetId ? ' open' : ''}`}
                  aria-pressed={openId === a.assetId}
                  onClick={() => setOpenId(a.assetId)}
                >
                  {a.thumbnailUrl ? (
                    <img src={a.thumbnailUrl} alt="" loading="lazy" width={160} height={160} />
                  ) : (
                    <span class="asset-kind" aria-hidden="true">
                      {a.status === 'failed' ? 'failed' : a.type}
                    </span>
                  )}
                  <span class="asset-name">{a.filename}</span>
                  <span class="muted">{fmtBytes(a.size)}</span>
                </button>
              </li>
            ))}
          </ul>
          {data ? (
            <Pager
              limit={LIMIT}
              offset={offset}
              total={data.total}
              onChange={setOffset}
              noun={{ one: 'asset', many: 'assets' }}
            />
          ) : null}
        </div>
        <div class="cdn-side">
          {openId ? <AssetDetail scope={scope} assetId={openId} onClose={() => setOpenId(null)} /> : null}
          <UsageChart usage={usage.data} error={usage.error} />
          <MergeJobs scope={scope} />
          <WebhookSecret org={props.org} />
        </div>
      </div>
    </Page>
  );
}
