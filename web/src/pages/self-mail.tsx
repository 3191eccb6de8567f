import type { FnOutput } from '../../../src/sdk/types.ts';
import { fn } from '../api.ts';
import { ErrorNote, fmtDate, useLoad } from '../ui.tsx';

// "Mail Pier sent you" (docs/decisions/103): on a Pier without SMTP_URL whose operator's machine is the only
// one that reaches it, the signed-in person reads Pier's own mail to their address here (the verification
// link first of all). Links inside are made clickable; nothing else of the text is interpreted.

type Mail = FnOutput<'listMySystemMailForCli'>['items'][number];

const URL_RE = /(https?:\/\/[^\s<>"]+)/g;

function MailText(props: { text: string }) {
  const parts = props.text.split(URL_RE);
  return (
    <pre class="mail-text">
      {parts.map((p, i) =>
        i % 2 === 1 ? (
          <a key={i} href={p}>
            {p}
          </a>
        ) : (
          p
        ),
      )}
    </pre>
  );
}

export function SelfMail() {
  const { data, error, reload } = useLoad(() => fn<{ items: Mail[] }>('listMySystemMailForCli', {}), []);
  return (
    <section class="card" aria-labelledby="self-mail-h">
      <h2 id="self-mail-h">Mail Pier sent you</h2>
      <p class="hint">
        This Pier has no mail server (no <code>SMTP_URL</code>), so its messages to you wait here instead of
        in your inbox. The verification link is also printed in Pier's log.
      </p>
      <ErrorNote error={error} />
      {data && data.items.length === 0 ? <p>No messages yet.</p> : null}
      {data?.items.map((m) => (
        <article key={m.id} class="mail-item" data-testid="self-mail-item">
          {/* Not a heading: the subject repeats the page's own title ("Verify your e-mail…"). */}
          <p class="mail-subject">{m.subject}</p>
          <p class="hint">
            To {m.to} · {fmtDate(m.createdAt)}
          </p>
          {m.text ? <MailText text={m.text} /> : null}
        </article>
      ))}
      <button type="button" class="secondary" onClick={reload}>
        Refresh
      </button>
    </section>
  );
}
