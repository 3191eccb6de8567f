// Spend (or tokens) over time as a stacked bar chart in plain SVG (no chart library: the dashboard's first
// load stays small). One bar per UTC day, one segment per series (a model, an API key or the organization),
// a <title> on each segment.

export type SpendPoint = { day: string; series: string; value: number };

const COLOURS = ['#2563eb', '#d97706', '#059669', '#db2777', '#7c3aed', '#0891b2', '#65a30d', '#dc2626'];
const OTHER = '#9ca3af';
const MAX_SERIES = COLOURS.length;

export const fmtUsd = (n: number) => `$${n < 1 && n > 0 ? n.toFixed(4) : n.toFixed(2)}`;

/** The last `days` UTC days ending at `today` (YYYY-MM-DD), oldest first. */
export function dayRange(today: string, days: number): string[] {
  const end = Date.parse(`${today}T00:00:00Z`);
  return Array.from({ length: days }, (_, i) =>
    new Date(end - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10),
  );
}

/** Series by total spend, the largest first; past MAX_SERIES the rest are one "other" series. */
function seriesOf(points: SpendPoint[]): {
  names: string[];
  colour: (s: string) => string;
  fold: (s: string) => string;
} {
  const totals = new Map<string, number>();
  for (const p of points) totals.set(p.series, (totals.get(p.series) ?? 0) + p.value);
  const ranked = [...totals.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([s]) => s);
  const kept = ranked.length > MAX_SERIES ? ranked.slice(0, MAX_SERIES - 1) : ranked;
  const fold = (s: string) => (kept.includes(s) ? s : 'other');
  const names = ranked.length > kept.length ? [...kept, 'other'] : kept;
  return { names, fold, colour: (s) => (s === 'other' ? OTHER : COLOURS[kept.indexOf(s)]!) };
}

export function SpendChart(props: {
  points: SpendPoint[];
  days: string[];
  label: string;
  labelOf?: (s: string) => string;
  /** How a value reads on the axis and in each segment's title (default: US dollars). */
  format?: (n: number) => string;
  empty?: string;
}) {
  const fmt = props.format ?? fmtUsd;
  const { names, colour, fold } = seriesOf(props.points);
  const byDay = new Map<string, Map<string, number>>();
  for (const p of props.points) {
    const m = byDay.get(p.day) ?? new Map<string, number>();
    m.set(fold(p.series), (m.get(fold(p.series)) ?? 0) + p.value);
    byDay.set(p.day, m);
  }
  const dayTotal = (d: string) => [...(byDay.get(d)?.values() ?? [])].reduce((a, b) => a + b, 0);
  const max = Math.max(0, ...props.days.map(dayTotal));
  const W = 720;
  const H = 220;
  const left = 64;
  const bottom = 24;
  const plotH = H - bottom - 8;
  const right = 20; // room for the last day's label
  const slot = (W - left - right) / props.days.length;
  const y = (v: number) => (max === 0 ? 0 : (v / max) * plotH);
  const nameOf = props.labelOf ?? ((s: string) => s);
  const ticks = max === 0 ? [0] : [0, max / 2, max];
  return (
    <figure class="spend-chart" data-testid="spend-chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={props.label} width="100%">
        {ticks.map((v) => (
          <g key={v}>
            <line x1={left} x2={W - right} y1={8 + plotH - y(v)} y2={8 + plotH - y(v)} class="grid" />
            <text x={left - 6} y={8 + plotH - y(v) + 4} text-anchor="end" class="axis">
              {fmt(v)}
            </text>
          </g>
        ))}
        {props.days.map((d, i) => {
          let base = 8 + plotH;
          const x = left + i * slot + slot * 0.15;
          const w = Math.max(1, slot * 0.7);
          return (
            <g key={d} data-day={d}>
              {names.map((s) => {
                const v = byDay.get(d)?.get(s) ?? 0;
                if (v <= 0) return null;
                const h = Math.max(1, y(v));
                base -= h;
                return (
                  <rect key={s} x={x} y={base} width={w} height={h} fill={colour(s)} data-series={s}>
                    <title>{`${d} · ${nameOf(s)}: ${fmt(v)}`}</title>
                  </rect>
                );
              })}
              {i % Math.ceil(props.days.length / 6) === 0 || i === props.days.length - 1 ? (
                <text x={x + w / 2} y={H - 6} text-anchor="middle" class="axis">
                  {d.slice(5)}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
      <figcaption>
        <ul class="legend" aria-label="Series">
          {names.map((s) => (
            <li key={s}>
              <span class="swatch" style={{ background: colour(s) }} aria-hidden="true" />
              {nameOf(s)}
            </li>
          ))}
        </ul>
        {names.length === 0 ? <p class="muted">{props.empty ?? 'No priced usage in this period.'}</p> : null}
      </figcaption>
    </figure>
  );
}
