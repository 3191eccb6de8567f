import { useState } from 'preact/hooks';
import { fn } from '../api.ts';
import { ErrorNote } from '../ui.tsx';
import { Lineage } from './memory-lineage.tsx';
import { type AgentChoice, excerpt, fmtScore, type MemoryScope, type Recalled } from './memory-types.ts';

// Try a recall as an app would (POST /v1/memory/memories/recall) and see each result's similarity, which
// leg found it and its lineage (extracted from which message, superseding what). A look,
// not a use: the server does not count these as accesses, so trying queries never moves tiers.

// Which leg of the recall found each result, so a person can see why a memory came back.
const FOUND_BY_LABEL = { vector: 'found by meaning', keyword: 'found by keywords', both: 'found by both' };
const FOUND_BY_HINT = {
  vector: 'Among the most similar by embedding (vector leg)',
  keyword: 'Among the best keyword matches (BM25 leg)',
  both: 'Among the most similar by embedding and the best keyword matches',
};

type Answer = { memories: Recalled[]; total: number; query: string; where: string };

export function RecallPanel(props: { scope: MemoryScope; agent: AgentChoice; onOpen: (id: string) => void }) {
  const { scope, agent } = props;
  const [answer, setAnswer] = useState<Answer | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const where = agent.kind === 'agent' ? agent.name : 'all memories';

  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const query = String(f.get('query') ?? '').trim();
    const threshold = String(f.get('threshold') ?? '').trim();
    setError(null);
    setBusy(true);
    try {
      const r = await fn<{ memories: Recalled[]; total: number }>('recallMemoriesForCli', {
        ...scope,
        query,
        ...(agent.kind === 'agent' ? { agentId: agent.id } : {}),
        limit: Number(f.get('limit')),
        ...(threshold ? { threshold: Number(threshold) } : {}),
        mode: String(f.get('mode')),
      });
      setAnswer({ ...r, query, where });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card recall" aria-labelledby="recall-title">
      <h2 id="recall-title">Try a recall</h2>
      <p class="hint">
        Searches {where} by meaning, as <code>POST /v1/memory/memories/recall</code> does (tiers hot and
        warm). Trying queries here does not count as recalling them.
      </p>
      <form class="inline-form" aria-label="Recall" onSubmit={submit}>
        <label class="grow">
          Query
          <input name="query" required maxLength={32000} placeholder="What does the customer prefer?" />
        </label>
        <label>
          Limit
          <input name="limit" type="number" min={1} max={100} step={1} value="10" class="narrow" />
        </label>
        <label>
          Threshold
          <input
            name="threshold"
            type="number"
            min={0}
            max={1}
            step={0.05}
            placeholder="0–1"
            class="narrow"
          />
        </label>
        <label>
          Mode
          <select name="mode">
            <option value="hybrid">hybrid (vector + keywords)</option>
            <option value="vector">vector</option>
            <option value="keyword">keyword (BM25)</option>
          </select>
        </label>
        <button type="submit" disabled={busy}>
          Recall
        </button>
      </form>
      <ErrorNote error={error} />
      {answer ? <RecallResults answer={answer} onOpen={props.onOpen} /> : null}
    </section>
  );
}

function RecallResults(props: { answer: Answer; onOpen: (id: string) => void }) {
  const { answer } = props;
  return (
    <div aria-live="polite">
      <p class="muted" role="status">
        {answer.total === 0
          ? `Nothing recalled for “${answer.query}” in ${answer.where}.`
          : `${answer.total} recalled for “${answer.query}” in ${answer.where}, best first.`}
      </p>
      <ol class="recall-results">
        {answer.memories.map((m) => (
          <li key={m.id} data-testid="recall-result">
            <div class="similarity" title="Cosine similarity">
              <span class="bar" aria-hidden="true">
                <span class="fill" style={{ width: `${Math.max(0, Math.min(1, m.similarity)) * 100}%` }} />
              </span>
              <span class="score" data-testid="similarity">
                <span class="sr-only">similarity </span>
                {fmtScore(m.similarity)}
              </span>
            </div>
            <p class="recalled-content">{excerpt(m.content, 240)}</p>
            <Lineage memory={m} />
            <p class="muted small">
              {m.foundBy ? (
                <span class="found-by" data-testid="found-by" title={FOUND_BY_HINT[m.foundBy]}>
                  {FOUND_BY_LABEL[m.foundBy]} ·{' '}
                </span>
              ) : null}
              {m.type} · {m.tier}
              <button type="button" class="link" onClick={() => props.onOpen(m.id)}>
                Open<span class="sr-only"> this memory</span>
              </button>
            </p>
          </li>
        ))}
      </ol>
    </div>
  );
}
