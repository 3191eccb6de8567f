import { useState } from 'preact/hooks';
import { ApiError, fn, isManager, type Org } from '../api.ts';
import { ConfirmButton, ErrorNote, fmtDate, Page, ShownOnce, useLoad } from '../ui.tsx';

// API keys of the v1 API (live → production data, test → sandbox data). The functions belong to the v1
// area; until they exist the page says so instead of failing.

type Key = {
  keyId: string;
  kind: 'live' | 'test';
  label: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
};
type CreatedKey = { key: string; keyId: string; kind: string; label: string };

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
              setCreated(
                await fn<CreatedKey>('createApiKeyForCli', {
                  orgSlug: props.org.slug,
                  kind: String(f.get('kind')),
                  ...(label ? { label } : {}),
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
          <button type="submit">Create API key</button>
        </form>
      ) : null}
      {data && data.length === 0 ? <p class="empty">No API keys yet.</p> : null}
      {data && data.length > 0 ? (
        <table aria-label="API keys">
          <thead>
            <tr>
              <th scope="col">Label</th>
              <th scope="col">Kind</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              {manager ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {data.map((k) => (
              <tr key={k.keyId}>
                <td data-label="Label">{k.label}</td>
                <td data-label="Kind">
                  <span class={`badge kind-${k.kind}`}>{k.kind}</span>
                </td>
                <td data-label="Created">{fmtDate(k.createdAt)}</td>
                <td data-label="Last used">{k.lastUsedAt ? fmtDate(k.lastUsedAt) : 'never'}</td>
                {manager ? (
                  <td data-label="Actions">
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
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </Page>
  );
}
