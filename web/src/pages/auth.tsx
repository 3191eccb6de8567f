import { useEffect, useState } from 'preact/hooks';
import { dashboardPost, type SessionInfo, setCsrfToken } from '../api.ts';
import { navigate, safeNext } from '../router.ts';
import { ErrorNote, Link } from '../ui.tsx';

// Sign-in, sign-up and the one-time "set your password" link.

type AuthReply = { user: { email: string }; csrfToken: string };

function useTitle(title: string) {
  useEffect(() => {
    document.title = `${title} · Pier`;
  }, [title]);
}

function CredentialsForm(props: {
  submit: string;
  newPassword: boolean;
  onSubmit: (email: string, password: string) => Promise<void>;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  return (
    <form
      class="stack"
      onSubmit={async (e) => {
        e.preventDefault();
        const f = new FormData(e.currentTarget as HTMLFormElement);
        setBusy(true);
        setError(null);
        try {
          await props.onSubmit(String(f.get('email')), String(f.get('password')));
        } catch (err) {
          setError(err);
        } finally {
          setBusy(false);
        }
      }}
    >
      <label>
        E-mail
        <input name="email" type="email" autocomplete="email" required />
      </label>
      <label>
        Password
        <input
          name="password"
          type="password"
          autocomplete={props.newPassword ? 'new-password' : 'current-password'}
          minLength={props.newPassword ? 10 : undefined}
          required
          aria-describedby={props.newPassword ? 'pw-hint' : undefined}
        />
      </label>
      {props.newPassword ? (
        <p id="pw-hint" class="hint">
          At least 10 characters.
        </p>
      ) : null}
      <ErrorNote error={error} />
      <button type="submit" disabled={busy}>
        {busy ? 'One moment…' : props.submit}
      </button>
    </form>
  );
}

export function SignInPage(props: {
  session: SessionInfo;
  next: string | null;
  onSignedIn: (next: string) => Promise<void>;
}) {
  useTitle('Sign in');
  const next = safeNext(props.next);
  useEffect(() => {
    if (props.session.user) navigate(next, true);
  }, []);
  return (
    <main id="main" class="auth">
      <h1>Sign in to Pier</h1>
      {next.startsWith('/cli/login') ? (
        <p class="notice">Sign in to approve the command-line login you started.</p>
      ) : null}
      <CredentialsForm
        submit="Sign in"
        newPassword={false}
        onSubmit={async (email, password) => {
          const r = await dashboardPost<AuthReply>('sign-in', { email, password });
          setCsrfToken(r.csrfToken);
          await props.onSignedIn(next);
        }}
      />
      {props.session.signup ? (
        <p>
          New here? <Link href="/sign-up">Create an account</Link>
        </p>
      ) : (
        <p class="hint">Sign-up is turned off on this Pier; ask an organization owner for an invitation.</p>
      )}
    </main>
  );
}

export function SignUpPage(props: { session: SessionInfo; onSignedIn: (next: string) => Promise<void> }) {
  useTitle('Create an account');
  const [checkEmail, setCheckEmail] = useState<string | null>(null);
  if (!props.session.signup)
    return (
      <main id="main" class="auth">
        <h1>Sign-up is turned off</h1>
        <p>This Pier only lets invited people in. Ask an organization owner for an invitation.</p>
        <Link href="/sign-in">Sign in</Link>
      </main>
    );
  return (
    <main id="main" class="auth">
      <h1>Create your Pier account</h1>
      <CredentialsForm
        submit="Create account"
        newPassword
        onSubmit={async (email, password) => {
          const r = await dashboardPost<AuthReply | { checkEmail: true }>('sign-up', { email, password });
          // An account with this address exists but nobody proved it: a claim link went to the address.
          if ('checkEmail' in r) return setCheckEmail(email);
          setCsrfToken(r.csrfToken);
          await props.onSignedIn('/');
        }}
      />
      {checkEmail ? (
        <p class="notice" role="status">
          Check the inbox of {checkEmail}: an account with this address is waiting to be claimed, and we sent
          it a link to set its password.
        </p>
      ) : null}
      <p>
        Have an account? <Link href="/sign-in">Sign in</Link>
      </p>
    </main>
  );
}

export function SetPasswordPage(props: { onSignedIn: (next: string) => Promise<void> }) {
  useTitle('Set your password');
  // The token sits in the fragment so it never reaches a server log; drop it from the address bar.
  const [token] = useState(() => new URLSearchParams(location.hash.slice(1)).get('token') ?? '');
  const [email, setEmail] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    history.replaceState(null, '', '/set-password');
    dashboardPost<{ email: string }>('password-link', { token }).then((r) => setEmail(r.email), setError);
  }, []);
  return (
    <main id="main" class="auth">
      <h1>Set your password</h1>
      {email ? (
        <form
          class="stack"
          onSubmit={async (e) => {
            e.preventDefault();
            const password = String(new FormData(e.currentTarget as HTMLFormElement).get('password'));
            setBusy(true);
            setError(null);
            try {
              const r = await dashboardPost<AuthReply>('set-password', { token, password });
              setCsrfToken(r.csrfToken);
              await props.onSignedIn('/');
            } catch (err) {
              setError(err);
            } finally {
              setBusy(false);
            }
          }}
        >
          <p>
            For <strong data-testid="link-email">{email}</strong>
          </p>
          <input type="email" autocomplete="username" value={email} hidden readOnly />
          <label>
            New password
            <input name="password" type="password" autocomplete="new-password" minLength={10} required />
          </label>
          <p class="hint">At least 10 characters.</p>
          <ErrorNote error={error} />
          <button type="submit" disabled={busy}>
            Set password and sign in
          </button>
        </form>
      ) : (
        <>
          <ErrorNote error={error} />
          {!error ? <p>Checking your link…</p> : <Link href="/sign-in">Go to sign-in</Link>}
        </>
      )}
    </main>
  );
}
