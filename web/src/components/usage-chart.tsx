// A tiny SVG chart of counts per day (issue 39): one stacked bar per day, a legend with each series' total,
// and a sentence for screen readers. No chart library: the dashboard's first load stays small. Reusable by
// any page that has `{ day: 'YYYY-MM-DD', <series>: number }[]` (docs/dashboard.md).

export type UsageSeries = { key: string; label: string; color: string };
export type UsageDay = { day: string } & Record<string, number | string>;

const W = 300;
const H = 80;

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const fmt = (n: number) =>
  Number.isInteger(n) ? n.toLocaleString() : n.toLocaleString(undefined, { maximumFractionDigits: 2 });

export function UsageChart(props: {
  title: string;
  days: UsageDay[] | undefined;
  series: UsageSeries[];
  testId?: string;
}) {
  const { days = [], series } = props;
  const totals = series.map((s) => days.reduce((n, d) => n + num(d[s.key]), 0));
  const dayTotal = (d: UsageDay) => series.reduce((n, s) => n + num(d[s.key]), 0);
  const max = Math.max(1, ...days.map(dayTotal));
  const slot = days.length ? W / days.length : W;
  const bar = Math.max(1, slot * 0.7);
  const first = days[0]?.day ?? '';
  const last = days[days.length - 1]?.day ?? '';
  const summary = `${props.title}, ${first} to ${last}: ${series.map((s, i) => `${fmt(totals[i]!)} ${s.label}`).join(', ')}.`;
  return (
    <figure class="usage-chart" data-testid={props.testId} data-state={props.days ? 'ready' : 'loading'}>
      <figcaption>
        <strong>{props.title}</strong>
        <span class="hint"> · busiest day {fmt(Math.max(0, ...days.map(dayTotal)))}</span>
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label={summary}>
        <line x1="0" y1={H - 0.5} x2={W} y2={H - 0.5} class="usage-axis" />
        {days.map((d, i) => {
          let y = H;
          return series.map((s) => {
            const h = (num(d[s.key]) / max) * (H - 4);
            if (h <= 0) return null;
            y -= h;
            return (
              <rect
                key={`${d.day}-${s.key}`}
                x={i * slot + (slot - bar) / 2}
                y={y}
                width={bar}
                height={h}
                fill={s.color}
              >
                <title>{`${d.day}: ${fmt(num(d[s.key]))} ${s.label}`}</title>
              </rect>
            );
          });
        })}
      </svg>
      <div class="usage-range hint" aria-hidden="true">
        <span>{first}</span>
        <span>{last}</span>
      </div>
      <ul class="usage-legend">
        {series.map((s, i) => (
          <li key={s.key}>
            <span class="usage-swatch" style={{ background: s.color }} aria-hidden="true" />
            {s.label}{' '}
            <strong data-testid={props.testId ? `${props.testId}-${s.key}` : undefined}>
              {fmt(totals[i]!)}
            </strong>
          </li>
        ))}
      </ul>
    </figure>
  );
}
