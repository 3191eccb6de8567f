import { useEffect, useState } from 'preact/hooks';
import { ApiError, fn, type Org } from '../api.ts';
import { ErrorNote, Page, useLoad } from '../ui.tsx';
import { AgentList } from './memory-agents.tsx';
import { MemoryDetailPanel } from './memory-detail.tsx';
import { MemoryList } from './memory-list.tsx';
import { RecallPanel } from './memory-recall.tsx';
import type { AgentChoice, AgentPage, Env, MemoryScope } from './memory-types.ts';
import './memory.css';

// Memory: an organization's agents and their memories in one environment, each memory's details and
// history, and a recall to try (read-only; a recall here does not count as an access). See docs/memory.md.

export function MemoryPage(props: { org: Org }) {
  const [environment, setEnvironment] = useState<Env>('production');
  const [choice, setChoice] = useState<AgentChoice | null>(null);
  const [openId, setOpenId] = useState<string | null>(null);
  const scope: MemoryScope = { orgSlug: props.org.slug, environment };
  const agents = useLoad(
    () => fn<AgentPage>('listMemoryAgentsForCli', { ...scope }),
    [props.org.slug, environment],
  );
  // A new organization or environment starts over: its agents are others.
  useEffect(() => {
    setChoice(null);
    setOpenId(null);
  }, [props.org.slug, environment]);

  const first = agents.data?.items[0];
  const current: AgentChoice | null =
    choice ??
    (agents.data ? (first ? { kind: 'agent', id: first.id, name: first.name } : { kind: 'all' }) : null);
  const unavailable =
    agents.error instanceof ApiError && agents.error.code === 'VECTOR_EXTENSION_MISSING'
      ? agents.error
      : null;

  return (
    <Page
      title="Memory"
      intro={`What the agents of ${props.org.name} remember. Live API keys store into production, test keys into the sandbox.`}
    >
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
      {unavailable ? (
        <p class="warning" role="alert" data-testid="memory-unavailable">
          {unavailable.message}
        </p>
      ) : (
        <ErrorNote error={agents.error} />
      )}
      {agents.data && current ? (
        <div class="memory-layout">
          <AgentList
            data={agents.data}
            current={current}
            onChoose={(c) => {
              setChoice(c);
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
            <RecallPanel scope={scope} agent={current} onOpen={setOpenId} />
          </div>
        </div>
      ) : null}
    </Page>
  );
}
