import { useState } from 'preact/hooks';
import type { FnOutput } from '../../../src/sdk/types.ts';
import { fn, type SessionInfo } from '../api.ts';
import { ErrorNote, fmtDate, Page, useLoad } from '../ui.tsx';
import './oauth.css';

// The OAuth consent page (/oauth/consent?request=…): an MCP client asks to act as the signed-in user. It
// names the client, where the answer goes, and where the request came from (as the CLI approval page does),
// and lets the user choose the organizations and the environment: sandbox unless production is chosen.

type RequestView = FnOutput<'getOauthRequestForCli'>;

export function OAuthConsentPage(props: { session: SessionInfo; query: URLSearchParams }) {
  const requestId = props.query.get('request') ?? '';
  const { data, error } = useLoad(() => fn<RequestView>('getOauthRequestForCli', { requestId }), [requestId]);
  const [chosen, setChosen] = useState<Set<string> | null>(null);
  const [environment, setEnvironment] = useState<'sandbox' | 'production'>('sandbox');
  const [busy, setBusy] = useState(false);
  const [actionError, setActionError] = useState<unknown>(null);
  const [done, setDone] = useState<'approved' | 'denied' | null>(null);

  if (error)
    return (
      <Page title="Authorize an application">
        <div class="card">
          <p class="error" role="alert">
            This authorization request cannot be shown: it is unknown, already answered, or expired. Start
            again from the application.
          </p>
        </div>
      </Page>
    );
  if (!data) return <p class="loading">Loading…</p>;
  const selected = chosen ?? new Set(data.orgs.length === 1 ? [data.orgs[0]!.id] : []);
  const toggle = (id: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(id);
    else next.delete(id);
    setChosen(next);
  };
  const decide = async (approve: boolean) => {
    setBusy(true);
    setActionError(null);
    try {
      const r = await fn<FnOutput<'decideOauthRequestForCli'>>('decideOauthRequestForCli', {
        requestId,
        approve,
        orgIds: approve ? [...selected] : [],
        environment,
      });
      setDone(approve ? 'approved' : 'denied');
      location.assign(r.redirectTo);
    } catch (e) {
      setActionError(e);
      setBusy(false);
    }
  };
  return (
    <Page title={`Allow ${data.client.name} to use Pier?`}>
      <div class="card approve">
        <p class="warning" role="note">
          Only allow this if you just connected <strong>{data.client.name}</strong> to Pier yourself. It will
          act as you, through Pier's MCP endpoint, on the organizations you choose below.
        </p>
        <dl class="facts">
          <dt>Application</dt>
          <dd data-testid="client-name">{data.client.name}</dd>
          <dt>Client ID</dt>
          <dd data-testid="client-id">
            <code>{data.client.id}</code>
            {data.client.kind === 'cimd' ? ' (its metadata document)' : ' (registered dynamically)'}
          </dd>
          <dt>Sends you back to</dt>
          <dd data-testid="redirect-host">{data.redirectHost}</dd>
          <dt>Request came from</dt>
          <dd data-testid="request-ip">{data.requestedFrom.ip ?? 'unknown'}</dd>
          <dt>Its software</dt>
          <dd data-testid="request-agent">{data.requestedFrom.userAgent ?? 'unknown'}</dd>
          <dt>Requested</dt>
          <dd>{fmtDate(data.requestedFrom.at)}</dd>
          <dt>Your IP address</dt>
          <dd data-testid="your-ip">{props.session.ip}</dd>
          <dt>Signed in as</dt>
          <dd>{props.session.user?.email}</dd>
        </dl>
        {data.orgs.length ? (
          <fieldset class="consent-choices">
            <legend>Organizations it may use</legend>
            {data.orgs.map((o) => (
              <label key={o.id} class="check">
                <input
                  type="checkbox"
                  checked={selected.has(o.id)}
                  onChange={(e) => toggle(o.id, (e.target as HTMLInputElement).checked)}
                />
                <span>
                  {o.name}{' '}
                  <span class="hint">
                    ({o.slug}, {o.role})
                  </span>
                </span>
              </label>
            ))}
          </fieldset>
        ) : (
          <p>You are not in an organization yet: create one first.</p>
        )}
        <fieldset class="consent-choices">
          <legend>Environment</legend>
          <label class="check">
            <input
              type="radio"
              name="environment"
              checked={environment === 'sandbox'}
              onChange={() => setEnvironment('sandbox')}
            />
            <span>Sandbox only (test data, nothing sent for real)</span>
          </label>
          <label class="check">
            <input
              type="radio"
              name="environment"
              checked={environment === 'production'}
              onChange={() => setEnvironment('production')}
            />
            <span>Production too (live data and real sends)</span>
          </label>
        </fieldset>
        {done ? (
          <p role="status">{done === 'approved' ? 'Allowed. Returning to the application…' : 'Refused.'}</p>
        ) : (
          <div class="row">
            <button type="button" disabled={busy || selected.size === 0} onClick={() => decide(true)}>
              Allow access
            </button>
            <button type="button" class="secondary" disabled={busy} onClick={() => decide(false)}>
              Deny
            </button>
          </div>
        )}
        <ErrorNote error={actionError} />
      </div>
    </Page>
  );
}
