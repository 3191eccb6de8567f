import { useEffect, useState } from 'preact/hooks';
import type { FnOutput } from '../../../src/sdk/types.ts';
import { fn, type Org } from '../api.ts';
import { NextStep } from '../components/next-step.tsx';
import { ErrorNote, fmtDate, Page, useLoad } from '../ui.tsx';
import './webdata.css';
import { AreaUsage, WebDataUsage } from './usage.tsx';

// Web data: what an organization's crawls, batch jobs and schedules are doing now (progress refreshes every
// two seconds while something runs) and its latest screenshots as pictures. Read-only; docs/webdata.md.

type Env = 'production' | 'sandbox';
type Recent = FnOutput<'listRecentWebDataForCli'>;

const RUNNING = new Set(['pending', 'processing']);
const POLL_MS = 2000;

export function WebDataPage(props: { org: Org }) {
  const [environment, setEnvironment] = useState<Env>('production');
  const key = `${props.org.slug}/${environment}`;
  const list = useLoad(
    async () => ({
      key,
      data: await fn<Recent>('listRecentWebDataForCli', { orgSlug: props.org.slug, environment }),
    }),
    [key],
  );
  const d = list.data?.key === key ? list.data.data : undefined;
  const busy = !!d && [...d.crawls, ...d.batches, ...d.screenshots].some((x) => RUNNING.has(x.status));
  useEffect(() => {
    if (!busy) return;
    const timer = setTimeout(list.reload, POLL_MS);
    return () => clearTimeout(timer);
  }, [busy, d]);

  return (
    <Page
      title="Web data"
      intro={`Extractions, crawls, batch jobs, schedules and screenshots of ${props.org.name}.`}
    >
      <AreaUsage>
        <WebDataUsage org={props.org} />
      </AreaUsage>
      <fieldset class="env-switch">
        <legend>Environment</legend>
        {(['production', 'sandbox'] as const).map((e) => (
          <label key={e} class="radio">
            <input
              type="radio"
              name="environment"
              value={e}
              checked={environment === e}
              onChange={() => setEnvironment(e)}
            />
            {e === 'production' ? 'Production (live keys)' : 'Sandbox (test keys)'}
          </label>
        ))}
      </fieldset>
      <ErrorNote error={list.error} />
      {!d && !list.error ? (
        <p class="loading-note" role="status">
          Loading…
        </p>
      ) : null}
      {d ? <Sections d={d} org={props.org.slug} /> : null}
    </Page>
  );
}

function Progress(props: { done: number; total: number; label: string }) {
  const pct = props.total ? Math.min(100, Math.round((props.done / props.total) * 100)) : 100;
  return (
    <span class="wd-progress">
      <progress max={100} value={pct} aria-label={props.label} />
      <span>{`${props.done}/${props.total}`}</span>
    </span>
  );
}

const Status = (p: { s: string }) => <span class={`wd-status wd-${p.s}`}>{p.s}</span>;

/** An empty list says how to fill it: the CLI command or the v1 call (docs/webdata.md). */
function Empty(props: { what: string; command: string }) {
  return <NextStep what={`No ${props.what} yet. Start one with:`} command={props.command} />;
}

function Sections({ d, org }: { d: Recent; org: string }) {
  return (
    <>
      <section aria-labelledby="wd-extractions">
        <h2 id="wd-extractions">Extractions</h2>
        {d.extractions.length ? (
          <table>
            <thead>
              <tr>
                <th>Page</th>
                <th>Mode</th>
                <th>Status</th>
                <th>Fetched with</th>
                <th>Started</th>
              </tr>
            </thead>
            <tbody>
              {d.extractions.map((x) => (
                <tr key={x.id} data-testid="extraction">
                  <td class="wd-url">{x.url}</td>
                  <td>{x.mode}</td>
                  <td>
                    <Status s={x.status} />
                    {x.error ? <div class="wd-error">{x.error}</div> : null}
                  </td>
                  <td>{x.fetchedWith ?? '—'}</td>
                  <td>{fmtDate(x.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <Empty what="extractions" command={`npx pier web extract https://example.com/ --org ${org}`} />
        )}
      </section>

      <section aria-labelledby="wd-shots">
        <h2 id="wd-shots">Screenshots</h2>
        {d.screenshots.length ? (
          <ul class="wd-shots">
            {d.screenshots.map((s) => (
              <li key={s.id} data-testid="screenshot">
                {s.imageUrl && s.format !== 'pdf' ? (
                  <a href={s.imageUrl} target="_blank" rel="noreferrer">
                    <img src={s.imageUrl} alt={`Screenshot of ${s.url}`} loading="lazy" />
                  </a>
                ) : (
                  <div class="wd-noimg">{s.status === 'failed' ? (s.error ?? 'failed') : s.format}</div>
                )}
                <span class="wd-url" title={s.url}>
                  {s.url}
                </span>
                <span>
                  <Status s={s.status} /> {s.imageWidth ? `${s.imageWidth}×${s.imageHeight}` : ''}
                </span>
              </li>
            ))}
          </ul>
        ) : (
          <Empty what="screenshots" command={`npx pier web screenshot https://example.com/ --org ${org}`} />
        )}
      </section>

      <section aria-labelledby="wd-crawls">
        <h2 id="wd-crawls">Crawls</h2>
        {d.crawls.length ? (
          <table>
            <thead>
              <tr>
                <th>Start page</th>
                <th>Status</th>
                <th>Pages</th>
                <th>Queued</th>
                <th>Started</th>
              </tr>
            </thead>
            <tbody>
              {d.crawls.map((c) => (
                <tr key={c.id} data-testid="crawl">
                  <td class="wd-url">{c.url}</td>
                  <td>
                    <Status s={c.status} />
                    {c.error ? <div class="wd-error">{c.error}</div> : null}
                  </td>
                  <td>
                    <Progress done={c.pagesCrawled} total={c.maxPages} label={`Pages of ${c.url}`} />
                  </td>
                  <td>{c.pagesQueued}</td>
                  <td>{fmtDate(c.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <Empty
            what="crawls"
            command={`npx pier web crawl https://example.com/ --org ${org} --max-pages 20`}
          />
        )}
      </section>

      <section aria-labelledby="wd-batches">
        <h2 id="wd-batches">Batch jobs</h2>
        {d.batches.length ? (
          <table>
            <thead>
              <tr>
                <th>Kind</th>
                <th>Status</th>
                <th>Progress</th>
                <th>Failed</th>
                <th>Started</th>
              </tr>
            </thead>
            <tbody>
              {d.batches.map((b) => (
                <tr key={b.id} data-testid="batch">
                  <td>{b.type}</td>
                  <td>
                    <Status s={b.status} />
                  </td>
                  <td>
                    <Progress
                      done={b.processedUrls}
                      total={b.totalUrls}
                      label={`Batch ${b.id.slice(0, 8)}`}
                    />
                  </td>
                  <td>{b.failedUrls}</td>
                  <td>{fmtDate(b.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <Empty
            what="batch jobs"
            command={`curl -X POST $PIER_URL/v1/webdata/batch/extractions \\\n  -H "Authorization: Bearer $PIER_API_KEY" -H 'content-type: application/json' \\\n  -d '{"urls":["https://example.com/a","https://example.com/b"],"config":{"mode":"markdown"}}'`}
          />
        )}
      </section>

      <section aria-labelledby="wd-schedules">
        <h2 id="wd-schedules">Schedules</h2>
        {d.schedules.length ? (
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Kind</th>
                <th>Every</th>
                <th>Last run</th>
                <th>Last change</th>
              </tr>
            </thead>
            <tbody>
              {d.schedules.map((s) => (
                <tr key={s.id} data-testid="schedule">
                  <td>
                    {s.name} {s.isActive ? null : <span class="muted">(paused)</span>}
                    <div class="wd-url">{s.url}</div>
                  </td>
                  <td>{s.type}</td>
                  <td>{s.frequency}</td>
                  <td>
                    {s.lastRun ? (
                      <>
                        <Status s={s.lastRun.status} /> {fmtDate(s.lastRun.startedAt)}
                      </>
                    ) : (
                      <span class="muted">not run yet</span>
                    )}
                  </td>
                  <td>
                    {s.lastRun?.changed
                      ? `changed (${Math.round((s.lastRun.changeScore ?? 0) * 1000) / 10} %)`
                      : s.lastRun?.changed === false
                        ? 'no change'
                        : s.lastRun?.baseline
                          ? 'baseline taken'
                          : '—'}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <Empty
            what="schedules"
            command={`curl -X POST $PIER_URL/v1/webdata/schedules \\\n  -H "Authorization: Bearer $PIER_API_KEY" -H 'content-type: application/json' \\\n  -d '{"name":"Prices","url":"https://example.com/","type":"extraction","frequency":"daily","config":{"mode":"markdown"}}'`}
          />
        )}
      </section>
    </>
  );
}
