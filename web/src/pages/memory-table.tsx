import type { ComponentChildren } from 'preact';

// A small table and pager for the memory page (the same props as the shared table the dev inbox brings,
// so the page can move to it with an import change): labelled cells for the narrow layout, an empty
// state, and rows that open with a click, Enter or Space.

export type Column<T> = { key: string; header: string; cell: (row: T) => ComponentChildren; class?: string };

export function Table<T>(props: {
  label: string;
  columns: Column<T>[];
  rows: T[] | undefined;
  rowKey: (row: T) => string;
  onRowClick?: (row: T) => void;
  selectedKey?: string | null;
  loading?: boolean;
  empty?: ComponentChildren;
  rowTestId?: (row: T) => string;
}) {
  const { columns, rows, onRowClick } = props;
  if (!rows)
    return props.loading ? (
      <p class="loading-note" role="status">
        Loading…
      </p>
    ) : null;
  if (rows.length === 0) return <p class="empty">{props.empty ?? 'Nothing here yet.'}</p>;
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
          const open = onRowClick ? () => onRowClick(row) : undefined;
          return (
            <tr
              key={key}
              data-testid={props.rowTestId?.(row)}
              class={[open ? 'clickable' : '', selected ? 'selected' : ''].join(' ').trim() || undefined}
              tabIndex={open ? 0 : undefined}
              aria-current={selected ? 'true' : undefined}
              onClick={open}
              onKeyDown={(e) => {
                if (!open || e.target !== e.currentTarget) return;
                if (e.key === 'Enter' || e.key === ' ') {
                  e.preventDefault();
                  open();
                }
              }}
            >
              {columns.map((c) => (
                <td key={c.key} class={c.class} data-label={c.header}>
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

/** "21–40 of 95 memories", previous and next, for `{ items, total, hasMore }` pages. */
export function Pager(props: {
  limit: number;
  offset: number;
  total: number;
  onChange: (offset: number) => void;
  noun?: string;
}) {
  const { limit, offset, total } = props;
  if (total === 0) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <span role="status" data-testid="pager-range">
        {Math.min(offset + 1, total)}–{Math.min(offset + limit, total)} of {total}
        {props.noun ? ` ${props.noun}` : ''}
      </span>
      <button
        type="button"
        class="secondary"
        disabled={offset === 0}
        onClick={() => props.onChange(Math.max(0, offset - limit))}
      >
        Previous
      </button>
      <button
        type="button"
        class="secondary"
        disabled={offset + limit >= total}
        onClick={() => props.onChange(offset + limit)}
      >
        Next
      </button>
    </nav>
  );
}
