import { useState } from 'preact/hooks';
import type { FnOutput } from '../../../src/sdk/types.ts';
import { fn } from '../api.ts';
import { Table } from '../table.tsx';
import { ConfirmButton, ErrorNote, fmtDate, Page, ShownOnce, useLoad } from '../ui.tsx';
import { McpCard } from './mcp-card.tsx';
import { GrantedClients } from './oauth-grants.tsx';

// Personal tokens: one click mints one (shown once), the list shows label, created, last used and expiry;
// labels are editable; revoking asks first.

type Token = FnOutput<'listTokensForCli'>[number];
type Created = FnOutput<'createTokenForCli'>;

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
      {data ? (
        <Table
          label="Tokens"
          rows={data}
          rowKey={(t) => t.keyId}
          rowTestId={(t) => `token-${t.keyId}`}
          empty="No tokens yet."
          columns={[
            {
              key: 'label',
              header: 'Label',
              cell: (t) =>
                editing === t.keyId ? (
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
                ),
            },
            { key: 'created', header: 'Created', cell: (t) => fmtDate(t.createdAt) },
            {
              key: 'used',
              header: 'Last used',
              cell: (t) => (t.lastUsedAt ? fmtDate(t.lastUsedAt) : 'never'),
            },
            {
              key: 'expires',
              header: 'Expires',
              cell: (t) => (t.expiresAt ? fmtDate(t.expiresAt) : 'never'),
            },
            {
              key: 'actions',
              header: 'Actions',
              cell: (t) => (
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
              ),
            },
          ]}
        />
      ) : null}
      <GrantedClients />
      <McpCard token={created?.token} />
    </Page>
  );
}
