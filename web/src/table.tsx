import type { ComponentChildren } from 'preact';

// The dashboard's one table and pager, so every list looks and behaves alike: a header row, cells
// labelled for the narrow-screen layout (styles.css shows `data-label` when the header row is hidden),
// an empty state, a loading state, and optionally clickable rows that work from the keyboard too.

export type Column<T> = {
  /** Stable id of the column (also the React key). */
  key: string;
  header: ComponentChildren;
  cell: (row: T) => ComponentChildren;
  /** Label for narrow screens when `header` is not plain text; defaults to `header` when it is a string. */
  label?: string;
  class?: string;
};

export function Table<T>(props: {
  /** Accessible name of the table. */
  label: string;
  columns: Column<T>[];
  rows: T[] | undefined;
  rowKey: (row: T) => string;
  /** Rows become focusable and open with a click, Enter or Space. */
  onRowClick?: (row: T) => void;
  /** Key of the row shown as selected (e.g. the message open beside the list). */
  selectedKey?: string | null;
  loading?: boolean;
  empty?: ComponentChildren;
  rowTestId?: (row: T) => string;
}) {
  const { columns, rows, onRowClick } = props;
  if (!rows && props.loading)
    return (
      <p class="loading-note" role="status">
        Loading…
      </p>
    );
  if (!rows) return null;
  if (rows.length === 0)
    return typeof props.empty === 'string' || props.empty == null ? (
      <p class="empty">{props.empty ?? 'Nothing here yet.'}</p>
    ) : (
      props.empty
    );
  return (
    <table aria-label={props.label} aria-busy={props.loading ? 'true' : undefined} class="data-table">
      <thead>
        <tr>
          {columns.map((c) => (
            <th scope="col" key={c.key} class={c.class}>
              {c.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => {
          const key = props.rowKey(row);
          const selected = props.selectedKey === key;
          return (
            <tr
              key={key}
              data-testid={props.rowTestId?.(row)}
              class={
                [onRowClick ? 'clickable' : '', selected ? 'selected' : ''].join(' ').trim() || undefined
              }
              tabIndex={onRowClick ? 0 : undefined}
              aria-current={selected ? 'true' : undefined}
              onClick={
                onRowClick
                  ? (e) => {
                      // A button or link inside the row does its own thing.
                      if ((e.target as HTMLElement).closest('button, a, input, select')) return;
                      onRowClick(row);
                    }
                  : undefined
              }
              onKeyDown={
                onRowClick
                  ? (e) => {
                      if (e.target !== e.currentTarget) return;
                      if (e.key === 'Enter' || e.key === ' ') {
                        e.preventDefault();
                        onRowClick(row);
                      }
                    }
                  : undefined
              }
            >
              {columns.map((c) => (
                <td
                  key={c.key}
                  class={c.class}
                  data-label={c.label ?? (typeof c.header === 'string' ? c.header : undefined)}
                >
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** Limit/offset pager for `{ items, total, hasMore }` pages: "21–40 of 95", previous and next. */
export function Pager(props: {
  limit: number;
  offset: number;
  total: number;
  onChange: (offset: number) => void;
  /** What is counted: `'memories'`, or `{ one: 'message', many: 'messages' }` to say "1 message". */
  noun?: string | { one: string; many: string };
}) {
  const { limit, offset, total } = props;
  if (total === 0) return null;
  const first = Math.min(offset + 1, total);
  const last = Math.min(offset + limit, total);
  const hasPrev = offset > 0;
  const noun = typeof props.noun === 'string' ? props.noun : total === 1 ? props.noun?.one : props.noun?.many;
  const hasNext = offset + limit < total;
  return (
    <nav class="pager" aria-label="Pages">
      <span role="status" data-testid="pager-range">
        {first}–{last} of {total}
        {noun ? ` ${noun}` : ''}
      </span>
      <button
        type="button"
        class="secondary"
        disabled={!hasPrev}
        onClick={() => props.onChange(Math.max(0, offset - limit))}
      >
        Previous
      </button>
      <button
        type="button"
        class="secondary"
        disabled={!hasNext}
        onClick={() => props.onChange(offset + limit)}
      >
        Next
      </button>
    </nav>
  );
}
