import { useState } from 'preact/hooks';
import { fn } from '../api.ts';
import { ConfirmButton, ErrorNote, fmtDate, Page, ShownOnce, useLoad } from '../ui.tsx';

// Personal tokens: one click mints one (shown once), the list shows label, created, last used and expiry;
// labels are editable; revoking asks first.

type Token = {
  keyId: string;
  label: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  current: boolean;
};
type Created = { token: string; keyId: string; label: string };

export function TokensPage() {
  const { data, error, reload } = useLoad(() => fn<Token[]>('listTokensForCli'), []);
  const [created, setCreated] = useState<Created | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const [editing, setEditing] = useState<string | null>(null);
  return (
    <Page
      title="Personal tokens"
      intro="A personal token acts as you on every organization you belong to: for scripts, CI and coding agents."
    >
      {created ? (
        <ShownOnce
          title={`New token “${created.label}”`}
          value={created.token}
          onDone={() => setCreated(null)}
        >
          <p class="hint">
            Use it as <code>Authorization: Bearer …</code>.
          </p>
        </ShownOnce>
      ) : (
        <button
          type="button"
          onClick={async () => {
            setActionError(null);
            try {
              setCreated(await fn<Created>('createTokenForCli'));
              reload();
            } catch (e) {
              setActionError(e);
            }
          }}
        >
          Create token
        </button>
      )}
      <ErrorNote error={error} />
      <ErrorNote error={actionError} />
      {data && data.length === 0 ? <p class="empty">No tokens yet.</p> : null}
      {data && data.length > 0 ? (
        <table aria-label="Tokens">
          <thead>
            <tr>
              <th scope="col">Label</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Expires</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {data.map((t) => (
              <tr key={t.keyId} data-testid={`token-${t.keyId}`}>
                <td data-label="Label">
                  {editing === t.keyId ? (
                    <form
                      class="rename"
                      onSubmit={async (e) => {
                        e.preventDefault();
                        const label = String(new FormData(e.currentTarget as HTMLFormElement).get('label'));
                        try {
                          await fn('updateTokenLabelForCli', { keyId: t.keyId, label });
                          setEditing(null);
                          reload();
                        } catch (err) {
                          setActionError(err);
                        }
                      }}
                    >
                      <label>
                        <span class="sr-only">New label</span>
                        <input
                          name="label"
                          defaultValue={t.label}
                          required
                          maxLength={100}
                          ref={(el) => el?.focus()}
                        />
                      </label>
                      <button type="submit">Save</button>
                      <button type="button" class="secondary" onClick={() => setEditing(null)}>
                        Cancel
                      </button>
                    </form>
                  ) : (
                    <>
                      {t.label}
                      {t.current ? <span class="badge">this session</span> : null}
                      <button type="button" class="link" onClick={() => setEditing(t.keyId)}>
                        Rename<span class="sr-only"> {t.label}</span>
                      </button>
                    </>
                  )}
                </td>
                <td data-label="Created">{fmtDate(t.createdAt)}</td>
                <td data-label="Last used">{t.lastUsedAt ? fmtDate(t.lastUsedAt) : 'never'}</td>
                <td data-label="Expires">{t.expiresAt ? fmtDate(t.expiresAt) : 'never'}</td>
                <td data-label="Actions">
                  <ConfirmButton
                    label="Revoke"
                    confirm={`Revoke “${t.label}”? Anything using it stops working.`}
                    onConfirm={async () => {
                      try {
                        await fn('revokeTokenByIdForCli', { keyId: t.keyId });
                        reload();
                      } catch (err) {
                        setActionError(err);
                      }
                    }}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </Page>
  );
}
