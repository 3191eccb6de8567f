import { useState } from 'preact/hooks';
import { ApiError, fn, type Org } from '../api.ts';
import { EnvSwitch, ErrorNote, Page, useLoad } from '../ui.tsx';
import { AgentList } from './memory-agents.tsx';
import { MemoryDetailPanel } from './memory-detail.tsx';
import { MemoryList } from './memory-list.tsx';
import { RecallPanel } from './memory-recall.tsx';
import type { AgentChoice, AgentPage, Env, MemoryScope } from './memory-types.ts';
import './memory.css';
import { AreaUsage, MemoryUsage } from './usage.tsx';

// Memory: an organization's agents and their memories in one environment, each memory's details and
// history, and a recall to try (read-only; a recall here does not count as an access). See docs/memory.md.

export function MemoryPage(props: { org: Org }) {
  const [environment, setEnvironment] = useState<Env>('production');
  const scope: MemoryScope = { orgSlug: props.org.slug, environment };
  // Everything below belongs to one organization and environment: answers and choices made for another
  // (still on screen while the new one loads) are ignored rather than shown or sent.
  const key = `${props.org.slug}/${environment}`;
  const agents = useLoad(
    async () => ({ key, page: await fn<AgentPage>('listMemoryAgentsForCli', { ...scope }) }),
    [key],
  );
  const [picked, setPicked] = useState<{ key: string; choice: AgentChoice } | null>(null);
  const [opened, setOpened] = useState<{ key: string; id: string } | null>(null);
  const data = agents.data?.key === key ? agents.data.page : undefined;
  const openId = opened?.key === key ? opened.id : null;
  const setOpenId = (id: string | null) => setOpened(id ? { key, id } : null);

  const first = data?.items[0];
  const current: AgentChoice | null =
    (picked?.key === key ? picked.choice : null) ??
    (data ? (first ? { kind: 'agent', id: first.id, name: first.name } : { kind: 'all' }) : null);
  const unavailable =
    agents.error instanceof ApiError && agents.error.code === 'VECTOR_EXTENSION_MISSING'
      ? agents.error
      : null;

  return (
    <Page
      title="Memory"
      intro={`What the agents of ${props.org.name} remember. Live API keys store into production, test keys into the sandbox.`}
    >
      <AreaUsage>
        <MemoryUsage org={props.org} />
      </AreaUsage>
      <EnvSwitch value={environment} onChange={setEnvironment} />
      {unavailable ? (
        <p class="warning" role="alert" data-testid="memory-unavailable">
          {unavailable.message}
        </p>
      ) : (
        <ErrorNote error={agents.error} />
      )}
      {!data && !agents.error ? (
        <p class="loading-note" role="status">
          Loading…
        </p>
      ) : null}
      {data && current ? (
        <div class="memory-layout">
          <AgentList
            data={data}
            current={current}
            onChoose={(c) => {
              setPicked({ key, choice: c });
              setOpenId(null);
            }}
          />
          <div class="memory-main">
            <MemoryList
              key={`${scope.orgSlug}/${environment}/${current.kind === 'agent' ? current.id : '*'}`}
              scope={scope}
              agent={current}
              openId={openId}
              onOpen={setOpenId}
            />
            {openId ? (
              <MemoryDetailPanel scope={scope} memoryId={openId} onClose={() => setOpenId(null)} />
            ) : null}
            <RecallPanel key={key} scope={scope} agent={current} onOpen={setOpenId} />
          </div>
        </div>
      ) : null}
    </Page>
  );
}
