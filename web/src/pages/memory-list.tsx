import { useState } from 'preact/hooks';
import { fn } from '../api.ts';
import { curlPost, keyKind, NextStep } from '../components/next-step.tsx';
import { type Column, Pager, Table } from '../table.tsx';
import { ErrorNote, fmtDate, useLoad } from '../ui.tsx';
import {
  type AgentChoice,
  type Collection,
  excerpt,
  fmtScore,
  MEMORY_TIERS,
  MEMORY_TYPES,
  type Memory,
  type MemoryScope,
  type OffsetPage,
} from './memory-types.ts';

// The memories of the chosen agent (or all), newest first, filtered by type, tier and collection. The page
// keys it by organization, environment and agent, so a new choice starts with no filters on page one.

const LIMIT = 20;
type Filters = { type: string; tier: string; collectionId: string };
const NO_FILTERS: Filters = { type: '', tier: '', collectionId: '' };

const columns: Column<Memory>[] = [
  { key: 'content', header: 'Content', cell: (m) => excerpt(m.content), class: 'content-cell' },
  { key: 'type', header: 'Type', cell: (m) => m.type },
  { key: 'tier', header: 'Tier', cell: (m) => <span class={`tier tier-${m.tier}`}>{m.tier}</span> },
  { key: 'confidence', header: 'Confidence', cell: (m) => fmtScore(m.confidence), class: 'num' },
  { key: 'access', header: 'Recalled', cell: (m) => m.accessCount, class: 'num' },
  { key: 'updated', header: 'Updated', cell: (m) => fmtDate(m.updatedAt) },
];

export function MemoryList(props: {
  scope: MemoryScope;
  agent: AgentChoice;
  openId: string | null;
  onOpen: (id: string) => void;
}) {
  const { scope, agent } = props;
  const agentId = agent.kind === 'agent' ? agent.id : undefined;
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [offset, setOffset] = useState(0);
  const collections = useLoad(
    () => fn<OffsetPage<Collection>>('listMemoryCollectionsForCli', { ...scope }),
    [scope.orgSlug, scope.environment],
  );
  const list = useLoad(
    () =>
      fn<OffsetPage<Memory>>('listMemoriesForCli', {
        ...scope,
        ...(agentId ? { agentId } : {}),
        ...(filters.type ? { type: filters.type } : {}),
        ...(filters.tier ? { tier: filters.tier } : {}),
        ...(filters.collectionId ? { collectionId: filters.collectionId } : {}),
        limit: LIMIT,
        offset,
      }),
    [scope.orgSlug, scope.environment, agentId, filters.type, filters.tier, filters.collectionId, offset],
  );
  const set = (k: keyof Filters) => (e: Event) => {
    setFilters({ ...filters, [k]: (e.target as HTMLSelectElement).value });
    setOffset(0);
  };
  const title = agent.kind === 'agent' ? `Memories of ${agent.name}` : 'All memories';

  return (
    <section class="memory-list" aria-labelledby="memory-list-title">
      <h2 id="memory-list-title">{title}</h2>
      <fieldset class="inline-form filters">
        <legend class="sr-only">Filters</legend>
        <AnySelect label="Type" value={filters.type} onChange={set('type')} options={MEMORY_TYPES} />
        <AnySelect label="Tier" value={filters.tier} onChange={set('tier')} options={MEMORY_TIERS} />
        <label>
          Collection
          <select value={filters.collectionId} onChange={set('collectionId')}>
            <option value="">any</option>
            {(collections.data?.items ?? []).map((c) => (
              <option key={c.id} value={c.id}>
                {c.name} ({c.memoryCount})
              </option>
            ))}
          </select>
        </label>
      </fieldset>
      <ErrorNote error={list.error ?? collections.error} />
      <Table
        label={title}
        columns={columns}
        rows={list.data?.items}
        rowKey={(m) => m.id}
        rowTestId={() => 'memory-row'}
        selectedKey={props.openId}
        onRowClick={(m) => props.onOpen(m.id)}
        loading={!list.data && !list.error}
        empty={
          !filters.type && !filters.tier && !filters.collectionId ? (
            <NextStep
              testId="memory-empty"
              what={`No memories here yet. Apps store them with a ${keyKind(props.scope.environment)} API key:`}
              command={curlPost('/memory/memories', {
                content: 'The user prefers dark mode',
                type: 'semantic',
                ...(props.agent.kind === 'agent' ? { agentId: props.agent.id } : {}),
              })}
            />
          ) : (
            'No memories match these filters.'
          )
        }
      />
      {list.data ? (
        <Pager limit={LIMIT} offset={offset} total={list.data.total} onChange={setOffset} noun="memories" />
      ) : null}
    </section>
  );
}

/** A filter select whose first choice, "any", means no filter. */
function AnySelect(props: {
  label: string;
  value: string;
  onChange: (e: Event) => void;
  options: readonly string[];
}) {
  return (
    <label>
      {props.label}
      <select value={props.value} onChange={props.onChange}>
        <option value="">any</option>
        {props.options.map((t) => (
          <option key={t} value={t}>
            {t}
          </option>
        ))}
      </select>
    </label>
  );
}
