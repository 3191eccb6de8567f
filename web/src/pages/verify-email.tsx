import { useEffect, useState } from 'preact/hooks';
import { dashboardPost, type User } from '../api.ts';
import { ErrorNote } from '../ui.tsx';
import { SelfMail } from './self-mail.tsx';

// Verified e-mail (docs/decisions/030): until the address is proven the account sees only this page, and
// nothing granted to the address (invitations, organizations made for it) reaches it.

/** Shown to a signed-in account whose address is not verified yet, in place of every other page. */
export function VerifyNeededPage(props: { user: User; selfMail: boolean; onSignOut: () => void }) {
  const [note, setNote] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    document.title = 'Verify your e-mail · Pier';
  }, []);
  const resend = async () => {
    setBusy(true);
    setError(null);
    try {
      const r = await dashboardPost<{ sent: boolean; emailVerified: boolean }>('resend-verification', {});
      if (r.emailVerified) location.assign('/');
      else
        setNote(r.sent ? 'Sent. Check your inbox.' : 'Several links went out this hour; check your inbox.');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="auth">
      <h1>Verify your e-mail</h1>
      <p>
        We sent a link to <strong data-testid="verify-email-address">{props.user.email}</strong>. Open it in
        this browser to finish: invitations and organizations for this address show up once it is verified.
      </p>
      {note ? <p class="notice">{note}</p> : null}
      <ErrorNote error={error} />
      <div class="actions">
        <button type="button" onClick={resend} disabled={busy}>
          Send the link again
        </button>
        <button type="button" class="secondary" onClick={props.onSignOut}>
          Sign out
        </button>
      </div>
      {props.selfMail ? <SelfMail /> : null}
    </main>
  );
}

/** /verify-email#token=…: the link from the verification mail, opened while signed in. */
export function VerifyEmailPage(props: { onVerified: () => Promise<void> }) {
  const [token] = useState(() => new URLSearchParams(location.hash.slice(1)).get('token') ?? '');
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    document.title = 'Verify your e-mail · Pier';
    history.replaceState(null, '', '/verify-email');
    dashboardPost('verify-email', { token }).then(() => props.onVerified(), setError);
  }, []);
  return (
    <main id="main" class="auth">
      <h1>Verify your e-mail</h1>
      {error ? <ErrorNote error={error} /> : <p>Checking your link…</p>}
    </main>
  );
}
