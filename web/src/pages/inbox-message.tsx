import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { FnOutput } from '../../../src/sdk/types.ts';
import { Table } from '../table.tsx';

// One message of the dev inbox: facts, then tabs for the HTML preview, the text part, the headers and the
// raw MIME source (with an .eml download).
//
// The HTML is the sender's, so it is shown in an iframe that can do nothing by itself: `sandbox` without
// allow-scripts (no scripts, no forms, no plugins, no meta refresh, an opaque origin), and a CSP of its own
// inside the srcdoc that blocks every load from anywhere (images, styles, fonts, frames), so opening a mail
// never tells its sender (tracking pixels, remote CSS). The srcdoc document also inherits the dashboard's
// CSP. Links open in a new tab (allow-popups) because following a sign-up or reset link is the point of a
// dev inbox; that is a click, never automatic.

export type OutboxMessage = FnOutput<'getOutboxMessageForCli'>;

export const PREVIEW_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; " +
  "form-action 'none'; base-uri 'none'";

/** The srcdoc of the preview: our head first (the CSP must precede the sender's markup), then the mail. */
export function previewDocument(html: string): string {
  return (
    '<!doctype html><html><head><meta charset="utf-8">' +
    `<meta http-equiv="Content-Security-Policy" content="${PREVIEW_CSP}">` +
    '<meta name="referrer" content="no-referrer"><base target="_blank">' +
    '<style>:root{color-scheme:light;background:#fff;color:#111}body{margin:1rem;font-family:system-ui,sans-serif}</style>' +
    `</head><body>${html}</body></html>`
  );
}

type TabId = 'html' | 'text' | 'headers' | 'raw';
const TABS: [TabId, string][] = [
  ['html', 'HTML'],
  ['text', 'Text'],
  ['headers', 'Headers'],
  ['raw', 'Raw'],
];

export function fmtTime(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

export function fmtSize(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KB`;
}

export function MessageView(props: { message: OutboxMessage; onClose: () => void }) {
  const m = props.message;
  const [tab, setTab] = useState<TabId>(m.html !== null ? 'html' : 'text');
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    setTab(m.html !== null ? 'html' : 'text');
    heading.current?.scrollIntoView({ block: 'nearest' });
    heading.current?.focus();
  }, [m.id]);

  const onTabKey = (e: KeyboardEvent) => {
    const i = TABS.findIndex(([id]) => id === tab);
    let next = -1;
    if (e.key === 'ArrowRight') next = (i + 1) % TABS.length;
    else if (e.key === 'ArrowLeft') next = (i + TABS.length - 1) % TABS.length;
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = TABS.length - 1;
    if (next < 0) return;
    e.preventDefault();
    setTab(TABS[next]![0]);
    document.getElementById(`mail-tab-${TABS[next]![0]}`)?.focus();
  };

  return (
    <section class="card mail-view" aria-labelledby="mail-subject" data-testid="mail-view">
      <div class="mail-view-head">
        <h2 id="mail-subject" tabIndex={-1} ref={heading}>
          {m.subject || '(no subject)'}
        </h2>
        <button type="button" class="secondary" onClick={props.onClose}>
          Close<span class="sr-only"> message</span>
        </button>
      </div>
      <dl class="facts">
        <dt>From</dt>
        <dd>{m.from}</dd>
        <dt>To</dt>
        <dd>{m.to.join(', ')}</dd>
        <dt>Received</dt>
        <dd>{fmtTime(m.createdAt)}</dd>
        <dt>Status</dt>
        <dd>
          <span class={`badge mail-status-${m.status}`}>{m.status}</span>
          <span class="badge">{m.environment}</span>
        </dd>
        <dt>Size</dt>
        <dd>{fmtSize(m.size)}</dd>
      </dl>
      <div role="tablist" aria-label="Message parts" class="tabs" onKeyDown={onTabKey}>
        {TABS.map(([id, label]) => (
          <button
            key={id}
            type="button"
            role="tab"
            id={`mail-tab-${id}`}
            aria-selected={tab === id}
            aria-controls={`mail-panel-${id}`}
            tabIndex={tab === id ? 0 : -1}
            class="tab"
            onClick={() => setTab(id)}
          >
            {label}
          </button>
        ))}
      </div>
      <div
        role="tabpanel"
        id={`mail-panel-${tab}`}
        aria-labelledby={`mail-tab-${tab}`}
        class="tab-panel"
        tabIndex={tab === 'html' ? undefined : 0}
      >
        {tab === 'html' ? <HtmlPreview html={m.html} /> : null}
        {tab === 'text' ? (
          m.text === null ? (
            <p class="empty">This message has no text part.</p>
          ) : (
            <pre class="mail-text" data-testid="mail-text">
              {m.text}
            </pre>
          )
        ) : null}
        {tab === 'headers' ? (
          <Table
            label="Headers"
            columns={[
              { key: 'name', header: 'Name', cell: (h) => h[0], class: 'header-name' },
              { key: 'value', header: 'Value', cell: (h) => h[1], class: 'header-value' },
            ]}
            rows={m.headers.map((h, i) => [h[0], h[1], i] as const)}
            rowKey={(h) => String(h[2])}
            empty="No headers."
          />
        ) : null}
        {tab === 'raw' ? <RawSource message={m} /> : null}
      </div>
    </section>
  );
}

function HtmlPreview(props: { html: string | null }) {
  const doc = useMemo(() => (props.html === null ? null : previewDocument(props.html)), [props.html]);
  if (doc === null) return <p class="empty">This message has no HTML part.</p>;
  return (
    <iframe
      title="HTML preview of the message"
      class="mail-preview"
      sandbox="allow-popups allow-popups-to-escape-sandbox"
      referrerpolicy="no-referrer"
      srcdoc={doc}
      data-testid="mail-preview"
    />
  );
}

function RawSource(props: { message: OutboxMessage }) {
  const { raw, id, subject } = props.message;
  const url = useMemo(() => URL.createObjectURL(new Blob([raw], { type: 'message/rfc822' })), [raw]);
  useEffect(() => () => URL.revokeObjectURL(url), [url]);
  const name = `${
    subject
      .replace(/[^\w.-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 60) || id
  }.eml`;
  return (
    <>
      <p>
        <a class="button" href={url} download={name} data-testid="eml-download">
          Download .eml
        </a>
      </p>
      <pre class="mail-raw" data-testid="mail-raw">
        {raw}
      </pre>
    </>
  );
}
