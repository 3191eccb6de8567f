import { useState } from 'preact/hooks';
import type { FnOutput } from '../../../src/sdk/types.ts';
import { fn } from '../api.ts';
import { Table } from '../table.tsx';
import { ConfirmButton, ErrorNote, fmtDate, useLoad } from '../ui.tsx';

// The tokens page's list of MCP clients the user allowed (OAuth grants): what each may reach, when it was
// last used, and a revoke button that ends its access at once.

type Grant = FnOutput<'listOauthGrantsForCli'>[number];

export function GrantedClients() {
  const { data, error, reload } = useLoad(() => fn<Grant[]>('listOauthGrantsForCli'), []);
  const [actionError, setActionError] = useState<unknown>(null);
  return (
    <section aria-labelledby="granted-clients">
      <h2 id="granted-clients">Connected applications</h2>
      <p class="hint">MCP clients you allowed to act as you. Revoking one ends its access at once.</p>
      <ErrorNote error={error} />
      <ErrorNote error={actionError} />
      {data ? (
        <Table
          label="Connected applications"
          rows={data}
          rowKey={(g) => g.grantId}
          rowTestId={(g) => `grant-${g.grantId}`}
          empty="No application is connected."
          columns={[
            { key: 'client', header: 'Application', cell: (g) => g.clientName },
            { key: 'host', header: 'Redirects to', cell: (g) => g.redirectHost },
            { key: 'orgs', header: 'Organizations', cell: (g) => g.orgs.map((o) => o.slug).join(', ') },
            { key: 'env', header: 'Environment', cell: (g) => g.environment },
            { key: 'created', header: 'Allowed', cell: (g) => fmtDate(g.createdAt) },
            {
              key: 'used',
              header: 'Last used',
              cell: (g) => (g.lastUsedAt ? fmtDate(g.lastUsedAt) : 'never'),
            },
            {
              key: 'actions',
              header: 'Actions',
              cell: (g) => (
                <ConfirmButton
                  label="Revoke"
                  confirm={`Revoke “${g.clientName}”? It loses access at once.`}
                  onConfirm={async () => {
                    try {
                      await fn('revokeOauthGrantForCli', { grantId: g.grantId });
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
    </section>
  );
}
