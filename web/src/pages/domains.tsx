import { useState } from 'preact/hooks';
import type { FnOutput } from '../../../src/sdk/types.ts';
import { fn, isManager, type Org } from '../api.ts';
import { ConfirmButton, CopyButton, ErrorNote, fmtDate, Page, useLoad } from '../ui.tsx';

// Sender domains for mail: live API keys send only from verified domains. Adding one shows the DNS
// records to publish (verification TXT, the DKIM key Pier made for the domain, SPF and DMARC values);
// "Check DNS now" looks them up and shows each record's state.

type Domain = FnOutput<'listMailDomainsForCli'>[number];
type DnsRecord = Domain['records'][number];

const KIND_LABEL: Record<DnsRecord['kind'], string> = {
  verification: 'Verification',
  dkim: 'DKIM',
  spf: 'SPF',
  dmarc: 'DMARC',
};

export function DomainsPage(props: { org: Org }) {
  const { data, error, reload } = useLoad(
    () => fn<Domain[]>('listMailDomainsForCli', { orgSlug: props.org.slug }),
    [props.org.slug],
  );
  const [actionError, setActionError] = useState<unknown>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const manager = isManager(props.org);
  const act = async (key: string, run: () => Promise<unknown>) => {
    setBusy(key);
    setActionError(null);
    try {
      await run();
      reload();
    } catch (err) {
      setActionError(err);
    } finally {
      setBusy(null);
    }
  };
  return (
    <Page
      title="Sender domains"
      intro={`Live API keys of ${props.org.name} send mail only from verified domains; test keys send from any address to the dev inbox.`}
    >
      <ErrorNote error={error} />
      <ErrorNote error={actionError} />
      {manager ? (
        <form
          class="inline-form"
          aria-label="Add a sender domain"
          onSubmit={(e) => {
            e.preventDefault();
            const form = e.currentTarget as HTMLFormElement;
            const domain = String(new FormData(form).get('domain')).trim();
            void act('add', async () => {
              await fn('addMailDomainForCli', { orgSlug: props.org.slug, domain });
              form.reset();
            });
          }}
        >
          <label>
            Domain
            <input name="domain" placeholder="example.com" maxLength={253} required />
          </label>
          <button type="submit" disabled={busy === 'add'}>
            Add domain
          </button>
        </form>
      ) : (
        <p class="hint">Only owners and admins can add or verify domains.</p>
      )}
      {data && !data.length ? <NoDomains org={props.org.slug} /> : null}
      {data?.map((d) => (
        <section class="card" key={d.id} data-testid={`domain-${d.domain}`} aria-label={d.domain}>
          <h2>
            {d.domain}{' '}
            <span class={`badge status-${d.status}`} data-testid="domain-status">
              {d.status}
            </span>
          </h2>
          <p class="hint">
            {d.lastCheckedAt ? `Last checked ${fmtDate(d.lastCheckedAt)}.` : 'Not checked yet.'} Publish these
            TXT records at your DNS provider, then check.
          </p>
          <table>
            <thead>
              <tr>
                <th scope="col">Record</th>
                <th scope="col">Name</th>
                <th scope="col">Value</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {d.records.map((r) => (
                <tr key={r.kind} data-testid={`record-${r.kind}`}>
                  <td>
                    {KIND_LABEL[r.kind]} {r.required ? '' : '(advised)'}
                  </td>
                  <td>
                    <code>{r.name}</code>
                  </td>
                  <td>
                    <code class="secret">{r.value}</code> <CopyButton value={r.value} label="Copy" />
                  </td>
                  <td>
                    <span class={`badge state-${r.state}`}>{r.state}</span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {manager ? (
            <div class="actions">
              <button
                type="button"
                disabled={busy === d.domain}
                onClick={() =>
                  act(d.domain, () =>
                    fn('verifyMailDomainForCli', { orgSlug: props.org.slug, domain: d.domain }),
                  )
                }
              >
                {busy === d.domain ? 'Checking…' : 'Check DNS now'}
              </button>
              <ConfirmButton
                label="Remove"
                confirm={`Remove ${d.domain}? Live mail from it will be refused.`}
                onConfirm={() =>
                  act(`rm-${d.domain}`, () =>
                    fn('removeMailDomainForCli', { orgSlug: props.org.slug, domain: d.domain }),
                  )
                }
              />
            </div>
          ) : null}
        </section>
      ))}
    </Page>
  );
}

/** What adding a domain leads to: the command, and the TXT records Pier will ask for (docs/mail.md). */
function NoDomains(props: { org: string }) {
  const rows: [string, string, string][] = [
    ['Verification', '_pier-verification.example.com', 'pier-verification=<token Pier gives>'],
    ['DKIM', '<selector>._domainkey.example.com', 'v=DKIM1; k=rsa; p=<the key Pier makes for the domain>'],
    ['SPF (advised)', 'example.com', 'v=spf1 <your mail server> ~all'],
    ['DMARC (advised)', '_dmarc.example.com', 'v=DMARC1; p=none;'],
  ];
  return (
    <div class="empty-state" data-testid="no-domains">
      <p class="empty">No sender domains yet. Add one above, or with:</p>
      <pre>{`npx pier domains add example.com --org ${props.org}`}</pre>
      <p class="hint">
        Pier then asks for these TXT records at your DNS provider (the exact values appear here):
      </p>
      <table>
        <thead>
          <tr>
            <th scope="col">Record</th>
            <th scope="col">Name</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(([kind, name, value]) => (
            <tr key={kind}>
              <td data-label="Record">{kind}</td>
              <td data-label="Name">
                <code>{name}</code>
              </td>
              <td data-label="Value">
                <code>{value}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
