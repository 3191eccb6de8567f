import { ApiError, fn, type Org } from '../api.ts';
import { UsageChart, type UsageDay } from '../components/usage-chart.tsx';
import { ErrorNote, useLoad } from '../ui.tsx';

// Usage over the last 30 days, per area (issue 39): each area's page shows its own chart, the organization's
// overview (the projects page) shows them all. Data from the usage-by-day functions (docs/dashboard.md).

const GREEN = '#2e8b57';
const BLUE = '#1f4fd1';
const RED = '#c0392b';
const AMBER = '#b7791f';
const PURPLE = '#7b4fc9';

type Days = { days: UsageDay[] };

function useDays(name: string, org: Org) {
  return useLoad(() => fn<Days>(name, { orgSlug: org.slug, days: 30 }), [name, org.slug]);
}

export function ApiUsage(props: { org: Org }) {
  const { data, error } = useDays('getApiUsageByDayForCli', props.org);
  const days = data?.days.map((d) => ({ ...d, ok: Number(d.requests) - Number(d.errors) }));
  return (
    <>
      <ErrorNote error={error} />
      <UsageChart
        title="API requests"
        testId="usage-api"
        days={days}
        series={[
          { key: 'ok', label: 'answered', color: BLUE },
          { key: 'errors', label: 'errors (4xx/5xx)', color: RED },
        ]}
      />
    </>
  );
}

export function MailUsage(props: { org: Org }) {
  const { data, error } = useDays('getMailUsageByDayForCli', props.org);
  return (
    <>
      <ErrorNote error={error} />
      <UsageChart
        title="Mail, last 30 days"
        testId="usage-mail"
        days={data?.days}
        series={[
          { key: 'delivered', label: 'delivered', color: GREEN },
          { key: 'sent', label: 'sent', color: BLUE },
          { key: 'bounced', label: 'bounced', color: RED },
          { key: 'failed', label: 'failed', color: AMBER },
        ]}
      />
    </>
  );
}

export function WorkflowUsage(props: { org: Org }) {
  const { data, error } = useDays('getWorkflowUsageByDayForCli', props.org);
  const days = data?.days.map((d) => ({ ...d, ok: Number(d.runs) - Number(d.failed) }));
  return (
    <>
      <ErrorNote error={error} />
      <UsageChart
        title="Workflow runs"
        testId="usage-runs"
        days={days}
        series={[
          { key: 'ok', label: 'runs', color: BLUE },
          { key: 'failed', label: 'failed', color: RED },
        ]}
      />
      <UsageChart
        title="Workflow credits"
        testId="usage-credits"
        days={data?.days}
        series={[{ key: 'credits', label: 'credits', color: PURPLE }]}
      />
    </>
  );
}

export function WebDataUsage(props: { org: Org }) {
  const { data, error } = useDays('getWebDataUsageByDayForCli', props.org);
  return (
    <>
      <ErrorNote error={error} />
      <UsageChart
        title="Web pages fetched"
        testId="usage-web"
        days={data?.days}
        series={[
          { key: 'extractions', label: 'extractions', color: GREEN },
          { key: 'crawlPages', label: 'crawl pages', color: AMBER },
        ]}
      />
    </>
  );
}

export function MemoryUsage(props: { org: Org }) {
  const { data, error } = useDays('getMemoryUsageByDayForCli', props.org);
  // Without pgvector memory is off; the memory page already says so and how to fix it.
  if (error instanceof ApiError && error.code === 'VECTOR_EXTENSION_MISSING') return null;
  return (
    <>
      <ErrorNote error={error} />
      <UsageChart
        title="Memories"
        testId="usage-memory"
        days={data?.days}
        series={[
          { key: 'stored', label: 'stored', color: GREEN },
          { key: 'changed', label: 'changed', color: AMBER },
        ]}
      />
    </>
  );
}

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'] as const;
const TYPES = [
  { key: 'image', color: BLUE },
  { key: 'video', color: PURPLE },
  { key: 'audio', color: AMBER },
  { key: 'document', color: GREEN },
  { key: 'other', color: RED },
] as const;

/** Bytes stored per day by type, in the one unit that fits the busiest day (the chart draws plain numbers). */
export function CdnUsage(props: { org: Org }) {
  const { data, error } = useDays('getCdnUsageByDayForCli', props.org);
  const dayBytes = (d: UsageDay) => TYPES.reduce((n, t) => n + Number(d[t.key] ?? 0), 0);
  const busiest = Math.max(0, ...(data?.days ?? []).map(dayBytes));
  let u = 0;
  while (busiest >= 1024 ** (u + 1) && u < UNITS.length - 1) u++;
  const days = data?.days.map((d) => {
    const out: UsageDay = { day: d.day };
    for (const t of TYPES) out[t.key] = Number(d[t.key] ?? 0) / 1024 ** u;
    return out;
  });
  return (
    <>
      <ErrorNote error={error} />
      <UsageChart
        title={`Storage added by type (${UNITS[u]})`}
        testId="usage-storage"
        days={days}
        series={TYPES.map((t) => ({ key: t.key, label: `${t.key} (${UNITS[u]})`, color: t.color }))}
      />
    </>
  );
}

export function IntegrationUsage(props: { org: Org }) {
  const { data, error } = useDays('getIntegrationUsageByDayForCli', props.org);
  return (
    <>
      <ErrorNote error={error} />
      <UsageChart
        title="Connections made"
        testId="usage-connections"
        days={data?.days}
        series={[
          { key: 'connected', label: 'connected', color: GREEN },
          { key: 'other', label: 'not connected now', color: RED },
        ]}
      />
    </>
  );
}

/** The organization's overview: every area's chart side by side (they wrap on a phone). */
export function OrgUsage(props: { org: Org }) {
  return (
    <section aria-labelledby="usage-h">
      <h2 id="usage-h">Usage, last 30 days</h2>
      <div class="usage-charts">
        <ApiUsage org={props.org} />
        <MailUsage org={props.org} />
        <WorkflowUsage org={props.org} />
        <WebDataUsage org={props.org} />
        <CdnUsage org={props.org} />
      </div>
    </section>
  );
}

/** One area's charts in the same grid. */
export function AreaUsage(props: { children: preact.ComponentChildren }) {
  return <div class="usage-charts">{props.children}</div>;
}
