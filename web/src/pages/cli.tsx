import { useEffect, useState } from 'preact/hooks';
import type { FnOutput } from '../../../src/sdk/types.ts';
import { fn, type SessionInfo, type User } from '../api.ts';
import { CopyButton, ErrorNote, Page } from '../ui.tsx';

// The CLI hand-off card (mint a login code to paste into `pier login --code`) and the approval page of
// `pier login`'s browser flow (PKCE: the code only works with the verifier the CLI kept).

type Minted = FnOutput<'createLoginCodeForCli'>;
const LOGIN_CODE_TTL_MS = 5 * 60 * 1000;

function useNow(): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  return now;
}

export function HandOffPage(props: { user: User }) {
  const [minted, setMinted] = useState<Minted | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const now = useNow();
  const mint = async () => {
    setBusy(true);
    setError(null);
    try {
      const r = await fn<Minted>('createLoginCodeForCli', {});
      // Count down from when the code arrived, not from the server's clock, so a skewed clock here cannot
      // show a live code as expired (or the reverse); the server stays the judge.
      setMinted({ ...r, expiresAt: new Date(Date.now() + LOGIN_CODE_TTL_MS).toISOString() });
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => {
    void mint();
  }, []);
  const left = minted ? Math.max(0, Math.round((Date.parse(minted.expiresAt) - now) / 1000)) : 0;
  const expired = minted !== null && left === 0;
  const mmss = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, '0')}`;
  return (
    <Page
      title="Sign in the CLI"
      intro={
        <>
          Run <code>pier login --code</code> on your machine and paste this one-time code.
        </>
      }
    >
      <div class="card handoff">
        <p>
          Signed in as <strong data-testid="handoff-email">{props.user.email}</strong>
        </p>
        {minted ? (
          <>
            <p class={expired ? 'code expired' : 'code'}>
              <span class="sr-only">Login code: </span>
              <span data-testid="login-code">{minted.code}</span>
            </p>
            <p aria-live="polite" data-testid="countdown">
              {expired ? 'This code has expired.' : `Expires in ${mmss}`}
            </p>
            <div class="row">
              {!expired ? <CopyButton value={minted.code} label="Copy code" /> : null}
              <button type="button" onClick={mint} disabled={busy}>
                Mint another code
              </button>
            </div>
            <p class="hint">
              The code works once, for five minutes, and becomes a personal token labelled “{minted.label}”.
              Never share it: whoever redeems it acts as you.
            </p>
          </>
        ) : (
          <p>{busy ? 'Minting a code…' : null}</p>
        )}
        <ErrorNote error={error} />
      </div>
    </Page>
  );
}

const LOOPBACK_CALLBACK_RE = /^http:\/\/(127\.0\.0\.1|localhost|\[::1\]):\d{1,5}\//;
const CHALLENGE_RE = /^[A-Za-z0-9_-]{43}$/;

export function CliApprovePage(props: { session: SessionInfo; query: URLSearchParams }) {
  const challenge = props.query.get('challenge') ?? '';
  const state = props.query.get('state') ?? '';
  const callback = props.query.get('callback') ?? '';
  const device = (props.query.get('device') ?? 'unknown device').slice(0, 200);
  const [openedAt] = useState(() => new Date());
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<'approved' | 'denied' | null>(null);

  const problem = !CHALLENGE_RE.test(challenge)
    ? 'The request has no valid PKCE challenge.'
    : !state || state.length > 200
      ? 'The request has no state.'
      : !LOOPBACK_CALLBACK_RE.test(callback)
        ? 'The callback is not on this computer (only 127.0.0.1, localhost or [::1] are allowed).'
        : null;

  const send = (params: Record<string, string>) => {
    const url = new URL(callback);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    url.searchParams.set('state', state);
    location.assign(url.toString());
  };

  return (
    <Page title="Approve command-line sign-in">
      {problem ? (
        <div class="card">
          <p class="error" role="alert">
            This sign-in request cannot be approved. {problem}
          </p>
          <p>Run pier login again.</p>
        </div>
      ) : (
        <div class="card approve">
          <p class="warning" role="note">
            Only approve a request you started yourself, just now, with <code>pier login</code>. If someone
            sent you this link, close this page: approving gives them access to your account.
          </p>
          <dl class="facts">
            <dt>Device</dt>
            <dd data-testid="device">{device}</dd>
            <dt>IP address</dt>
            <dd data-testid="device-ip">{props.session.ip}</dd>
            <dt>Requested</dt>
            <dd>{openedAt.toLocaleString()}</dd>
            <dt>Signed in as</dt>
            <dd>{props.session.user?.email}</dd>
          </dl>
          {done === 'approved' ? (
            <p role="status">Approved. Handing the code to the CLI… you can close this tab.</p>
          ) : done === 'denied' ? (
            <p role="status">Refused. The CLI was told; you can close this tab.</p>
          ) : (
            <div class="row">
              <button
                type="button"
                onClick={async () => {
                  setError(null);
                  try {
                    const r = await fn<Minted>('createLoginCodeForCli', {
                      codeChallenge: challenge,
                      device: { label: device, ip: props.session.ip },
                    });
                    setDone('approved');
                    send({ code: r.code });
                  } catch (e) {
                    setError(e);
                  }
                }}
              >
                Approve sign-in
              </button>
              <button
                type="button"
                class="secondary"
                onClick={() => {
                  setDone('denied');
                  send({ error: 'access_denied' });
                }}
              >
                Deny
              </button>
            </div>
          )}
          <ErrorNote error={error} />
        </div>
      )}
    </Page>
  );
}
