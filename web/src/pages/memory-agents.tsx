import type { AgentChoice, AgentPage } from './memory-types.ts';

// The agents of the environment with their memory counts, and "All memories" (agents or not).

export function AgentList(props: {
  data: AgentPage;
  current: AgentChoice;
  onChoose: (c: AgentChoice) => void;
}) {
  const { data, current } = props;
  const all = data.items.reduce((n, a) => n + a.memoryCount, data.memoriesWithoutAgent);
  const isCurrent = (id: string | null) =>
    id === null ? current.kind === 'all' : current.kind === 'agent' && current.id === id;
  return (
    <nav class="agent-list" aria-label="Agents">
      <h2>Agents</h2>
      {data.items.length === 0 ? <p class="empty">No agents in this environment yet.</p> : null}
      <ul>
        {data.items.map((a) => (
          <li key={a.id}>
            <button
              type="button"
              class="agent"
              aria-pressed={isCurrent(a.id)}
              title={a.description ?? undefined}
              data-testid={`agent-${a.name}`}
              onClick={() => props.onChoose({ kind: 'agent', id: a.id, name: a.name })}
            >
              <span class="agent-name">{a.name}</span>
              <span class="count">
                {a.memoryCount}
                <span class="sr-only"> memories</span>
              </span>
            </button>
          </li>
        ))}
        <li>
          <button
            type="button"
            class="agent"
            aria-pressed={isCurrent(null)}
            onClick={() => props.onChoose({ kind: 'all' })}
          >
            <span class="agent-name">All memories</span>
            <span class="count">
              {all}
              <span class="sr-only"> memories</span>
            </span>
          </button>
        </li>
      </ul>
      {data.hasMore ? <p class="hint">Showing the newest {data.items.length} agents.</p> : null}
    </nav>
  );
}
