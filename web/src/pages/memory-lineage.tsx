import { fmtDate } from '../ui.tsx';
import { excerpt, type Memory } from './memory-types.ts';

// Where a memory came from and what it replaced (docs/memory.md, "Inference"): shown under each recall
// result, so a person sees why a fact is there and which older fact it won over.

const PERIOD: Record<string, Intl.DateTimeFormatOptions> = {
  year: { year: 'numeric', timeZone: 'UTC' },
  month: { year: 'numeric', month: 'long', timeZone: 'UTC' },
  week: { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' },
  day: { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' },
};

/** "February 2026", "week of 23 Feb 2026", or a date and time for an instant. */
export function fmtEventTime(at: string, precision: string | null): string {
  const opts = precision ? PERIOD[precision] : undefined;
  if (!opts) return fmtDate(at);
  const text = new Date(at).toLocaleDateString(undefined, opts);
  return precision === 'week' ? `week of ${text}` : text;
}

export function Lineage(props: {
  memory: Pick<Memory, 'lineage' | 'eventAt' | 'eventPrecision' | 'validUntil'>;
}) {
  const { lineage, eventAt, eventPrecision, validUntil } = props.memory;
  const source = lineage?.source;
  const supersedes = lineage?.supersedes ?? [];
  if (!source && !supersedes.length && !lineage?.supersededBy && !eventAt) return null;
  return (
    <ul class="lineage small" data-testid="lineage">
      {eventAt ? (
        <li data-testid="lineage-time">
          About {fmtEventTime(eventAt, eventPrecision)}
          {validUntil ? `, held until ${fmtEventTime(validUntil, eventPrecision)}` : ''}
        </li>
      ) : null}
      {source ? (
        <li data-testid="lineage-source">
          Extracted from message {source.index + 1} ({source.role}
          {source.at ? `, ${fmtDate(source.at)}` : ''}
          {source.id ? `, id ${source.id}` : ''}): <q>{excerpt(source.excerpt, 160)}</q>
          {lineage?.model ? <span class="muted"> · by {lineage.model}</span> : null}
        </li>
      ) : null}
      {supersedes.map((s) => (
        <li key={s.id} data-testid="lineage-supersedes">
          Supersedes <q>{excerpt(s.content, 160)}</q>
        </li>
      ))}
      {lineage?.supersededBy ? (
        <li data-testid="lineage-superseded-by">
          Superseded by <q>{excerpt(lineage.supersededBy.content, 160)}</q>
        </li>
      ) : null}
    </ul>
  );
}
