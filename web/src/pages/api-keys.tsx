import { useState } from 'preact/hooks';
import type { FnOutput } from '../../../src/sdk/types.ts';
import { ApiError, fn, isManager, type Org } from '../api.ts';
import { Table } from '../table.tsx';
import { ConfirmButton, ErrorNote, fmtDate, Page, ShownOnce, useLoad } from '../ui.tsx';
import { ApiUsage, AreaUsage } from './usage.tsx';

// API keys of the v1 API (live → production data, test → sandbox data), each with the v1 rate limit it
// carries, if any (decision 094; without one the organization's plan sets it). A Pier without the API key
// functions shows an empty state instead of failing.

type Key = FnOutput<'listApiKeysForCli'>[number];
type CreatedKey = FnOutput<'createApiKeyForCli'>;

export function ApiKeysPage(props: { org: Org }) {
  const { data, error, reload } = useLoad(async () => {
    try {
      return await fn<Key[]>('listApiKeysForCli', { orgSlug: props.org.slug });
    } catch (e) {
      if (e instanceof ApiError && e.code === 'FUNCTION_NOT_FOUND') return null;
      throw e;
    }
  }, [props.org.slug]);
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const manager = isManager(props.org);
  return (
    <Page
      title="API keys"
      intro={`Keys for the v1 API of ${props.org.name}: live keys see production data, test keys the sandbox.`}
    >
      <AreaUsage>
        <ApiUsage org={props.org} />
      </AreaUsage>
      <ErrorNote error={error} />
      <ErrorNote error={actionError} />
      {data === null ? (
        <p class="empty" data-testid="api-keys-unavailable">
          API keys arrive with the v1 API; this Pier does not offer them yet.
        </p>
      ) : null}
      {data && created ? (
        <ShownOnce
          title={`New ${created.kind} key “${created.label}”`}
          value={created.key}
          onDone={() => setCreated(null)}
        />
      ) : null}
      {data && !created && manager ? (
        <form
          class="inline-form"
          aria-label="Create an API key"
          onSubmit={async (e) => {
            e.preventDefault();
            const f = new FormData(e.currentTarget as HTMLFormElement);
            setActionError(null);
            try {
              const label = String(f.get('label')).trim();
              const perSec = Number(f.get('perSec'));
              const burst = Number(f.get('burst'));
              setCreated(
                await fn<CreatedKey>('createApiKeyForCli', {
                  orgSlug: props.org.slug,
                  kind: String(f.get('kind')),
                  ...(label ? { label } : {}),
                  // Both or neither: the server names what is wrong with a half-given limit.
                  ...(f.get('perSec') || f.get('burst') ? { rateLimit: { perSec, burst } } : {}),
                }),
              );
              reload();
            } catch (err) {
              setActionError(err);
            }
          }}
        >
          <label>
            Kind
            <select name="kind">
              <option value="test">test (sandbox)</option>
              <option value="live">live (production)</option>
            </select>
          </label>
          <label>
            Label (optional)
            <input name="label" maxLength={100} />
          </label>
          <label>
            Requests per second (optional)
            <input name="perSec" type="number" min={0.001} step="any" />
          </label>
          <label>
            Burst (optional)
            <input name="burst" type="number" min={1} step={1} />
          </label>
          <button type="submit">Create API key</button>
        </form>
      ) : null}
      {data ? (
        <Table
          label="API keys"
          rows={data}
          rowKey={(k) => k.keyId}
          empty="No API keys yet."
          columns={[
            { key: 'label', header: 'Label', cell: (k) => k.label },
            {
              key: 'kind',
              header: 'Kind',
              cell: (k) => <span class={`badge kind-${k.kind}`}>{k.kind}</span>,
            },
            {
              key: 'limit',
              header: 'Rate limit',
              cell: (k) =>
                k.rateLimit ? `${k.rateLimit.perSec}/s, burst ${k.rateLimit.burst}` : 'plan default',
            },
            { key: 'created', header: 'Created', cell: (k) => fmtDate(k.createdAt) },
            {
              key: 'used',
              header: 'Last used',
              cell: (k) => (k.lastUsedAt ? fmtDate(k.lastUsedAt) : 'never'),
            },
            ...(manager
              ? [
                  {
                    key: 'actions',
                    header: 'Actions',
                    cell: (k: Key) => (
                      <ConfirmButton
                        label="Revoke"
                        confirm={`Revoke “${k.label}”?`}
                        onConfirm={async () => {
                          try {
                            await fn('revokeApiKeyForCli', { orgSlug: props.org.slug, keyId: k.keyId });
                            reload();
                          } catch (err) {
                            setActionError(err);
                          }
                        }}
                      />
                    ),
                  },
                ]
              : []),
          ]}
        />
      ) : null}
    </Page>
  );
}
