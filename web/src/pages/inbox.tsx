import { useEffect, useRef, useState } from 'preact/hooks';
import type { FnOutput } from '../../../src/sdk/types.ts';
import { fn, type Org } from '../api.ts';
import { curlPost, keyKind, NextStep } from '../components/next-step.tsx';
import { type Column, Pager, Table } from '../table.tsx';
import { ErrorNote, Page } from '../ui.tsx';
import { fmtSize, fmtTime, MessageView, type OutboxMessage } from './inbox-message.tsx';
import { AreaUsage, MailUsage } from './usage.tsx';

// The dev inbox, Pier's Mailpit: the mail the built-in outbox kept (all mail when no SMTP_URL is set,
// and sandbox mail always), newest first, with search, a status filter, pages and a refresh every few
// seconds that can be paused. Any member of the organization may read it.

type Listing = FnOutput<'listOutboxForCli'>;
type Summary = Listing['items'][number];
/** One response and the offset it was asked for: the rows, the range label and the pager all read this. */
type Shown = Listing & { offset: number };
type Env = 'production' | 'sandbox';

const LIMIT = 25;
const REFRESH_MS = 5000;
const STATUSES = ['scheduled', 'queued', 'sending', 'sent', 'delivered', 'bounced', 'failed', 'cancelled'];

const columns: Column<Summary>[] = [
  { key: 'time', header: 'Received', cell: (m) => fmtTime(m.createdAt), class: 'nowrap' },
  { key: 'from', header: 'From', cell: (m) => m.from },
  { key: 'to', header: 'To', cell: (m) => m.to.join(', ') },
  {
    key: 'subject',
    header: 'Subject',
    cell: (m) => <span class="mail-subject">{m.subject || '(no subject)'}</span>,
  },
  {
    key: 'status',
    header: 'Status',
    cell: (m) => <span class={`badge mail-status-${m.status}`}>{m.status}</span>,
  },
  { key: 'size', header: 'Size', cell: (m) => fmtSize(m.size), class: 'nowrap' },
];

export function InboxPage(props: { org: Org }) {
  const orgSlug = props.org.slug;
  const [environment, setEnvironment] = useState<Env>('production');
  const [searchInput, setSearchInput] = useState('');
  const [search, setSearch] = useState('');
  const [status, setStatus] = useState('');
  const [offset, setOffset] = useState(0);
  const [paused, setPaused] = useState(false);
  const [tick, setTick] = useState(0);
  const [list, setList] = useState<Shown | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>(null);
  const [openId, setOpenId] = useState<string | null>(null);
  const [message, setMessage] = useState<OutboxMessage | null>(null);
  const [messageError, setMessageError] = useState<unknown>(null);
  const query = `${orgSlug}|${environment}|${search}|${status}|${offset}`;
  const lastQuery = useRef(query);
  // Every request takes the next number; a response is shown only while its number is still the latest,
  // so a slow answer to an older page or filter can never overwrite the newer one.
  const latest = useRef(0);

  // Another organization or environment: start over.
  useEffect(() => {
    setOffset(0);
    setOpenId(null);
    setList(undefined);
  }, [orgSlug, environment]);

  // Typing in the search box waits for a pause before asking the server.
  useEffect(() => {
    const h = setTimeout(() => {
      setSearch(searchInput.trim());
      setOffset(0);
    }, 300);
    return () => clearTimeout(h);
  }, [searchInput]);

  useEffect(() => {
    const seq = ++latest.current;
    const live = () => seq === latest.current;
    const asked = offset;
    // A refresh of the same query keeps the rows on screen; a new query shows it is loading.
    if (lastQuery.current !== query) setLoading(true);
    lastQuery.current = query;
    fn<Listing>('listOutboxForCli', {
      orgSlug,
      environment,
      limit: LIMIT,
      offset,
      ...(search ? { search } : {}),
      ...(status ? { status } : {}),
    }).then(
      (d) => {
        if (!live()) return;
        setList({ ...d, offset: asked });
        setError(null);
        setLoading(false);
      },
      (e) => {
        if (!live()) return;
        setError(e);
        setLoading(false);
      },
    );
  }, [query, tick]);

  // Leaving the page: whatever is still in flight is dropped.
  useEffect(
    () => () => {
      latest.current++;
    },
    [],
  );

  useEffect(() => {
    if (paused) return;
    const h = setInterval(() => {
      if (!document.hidden) setTick((n) => n + 1);
    }, REFRESH_MS);
    return () => clearInterval(h);
  }, [paused]);

  useEffect(() => {
    if (!openId) {
      setMessage(null);
      return;
    }
    let live = true;
    setMessageError(null);
    fn<OutboxMessage>('getOutboxMessageForCli', { orgSlug, id: openId }).then(
      (m) => live && setMessage(m),
      (e) => live && setMessageError(e),
    );
    return () => {
      live = false;
    };
  }, [openId, orgSlug]);

  return (
    <Page
      title="Dev inbox"
      intro={`Mail of ${props.org.name} kept by Pier's built-in outbox instead of being delivered: all mail when no SMTP server is configured, and sandbox (test key) mail always.`}
    >
      <AreaUsage>
        <MailUsage org={props.org} />
      </AreaUsage>
      <form class="inline-form inbox-tools" aria-label="Filter messages" onSubmit={(e) => e.preventDefault()}>
        <fieldset class="segmented">
          <legend>Environment</legend>
          {(['production', 'sandbox'] as const).map((env) => (
            <label key={env}>
              <input
                type="radio"
                name="environment"
                value={env}
                checked={environment === env}
                onChange={() => setEnvironment(env)}
              />
              <span>{env}</span>
            </label>
          ))}
        </fieldset>
        <label>
          Search
          <input
            type="search"
            value={searchInput}
            maxLength={200}
            placeholder="Subject, from or to"
            onInput={(e) => setSearchInput((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          Status
          <select
            value={status}
            onChange={(e) => {
              setStatus((e.target as HTMLSelectElement).value);
              setOffset(0);
            }}
          >
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <button type="button" class="secondary" aria-pressed={paused} onClick={() => setPaused((p) => !p)}>
          {paused ? 'Resume auto-refresh' : 'Pause auto-refresh'}
        </button>
        <button type="button" class="secondary" onClick={() => setTick((n) => n + 1)}>
          Refresh now
        </button>
      </form>
      <ErrorNote error={error} />
      <Table
        label="Messages"
        columns={columns}
        rows={list?.items}
        rowKey={(m) => m.id}
        rowTestId={() => 'mail-row'}
        onRowClick={(m) => setOpenId(m.id)}
        selectedKey={openId}
        loading={loading}
        empty={
          search || status ? (
            'No messages match.'
          ) : (
            <NextStep
              testId="inbox-empty"
              what={`No ${environment} mail in the outbox yet. Send one with a ${keyKind(environment)} API key:`}
              command={curlPost('/mail/send', {
                from: 'hello@example.com',
                to: ['you@example.com'],
                subject: 'Hello from Pier',
                text: 'It works.',
              })}
            />
          )
        }
      />
      {list ? (
        <Pager
          limit={LIMIT}
          offset={list.offset}
          total={list.total}
          onChange={setOffset}
          noun={{ one: 'message', many: 'messages' }}
        />
      ) : null}
      <ErrorNote error={messageError} />
      {openId && message?.id === openId ? (
        <MessageView message={message} onClose={() => setOpenId(null)} />
      ) : null}
    </Page>
  );
}
