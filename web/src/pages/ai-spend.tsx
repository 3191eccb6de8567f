import { useState } from 'preact/hooks';
import type { FnOutput } from '../../../src/sdk/types.ts';
import { fn, isManager, type Org } from '../api.ts';
import { Table } from '../table.tsx';
import { ErrorNote, Page, useLoad } from '../ui.tsx';
import { dayRange, fmtUsd, SpendChart } from './spend-chart.tsx';
import './ai-spend.css';

// What the organization's apps spent through the model proxy: a chart per day by model, by API key or for the
// whole organization, in dollars or tokens, the totals per model, and the budgets and allow-lists that limit
// it (docs/models.md, "Spend, budgets and allow-lists").

type Usage = FnOutput<'getModelUsageForCli'>;
type Limits = FnOutput<'getModelLimitsForCli'>;
const DAYS = 30;
// What the chart's segments are: one per model, per API key, or the organization's total alone.
const BY = { model: 'Model', key: 'API key', org: 'Organization' } as const;
type By = keyof typeof BY;
const fmtTokens = (n: number) => (n >= 10_000 ? `${Math.round(n / 1000)}k` : String(Math.round(n)));

export function AiSpendPage(props: { org: Org }) {
  const orgSlug = props.org.slug;
  const { data, error, reload } = useLoad(
    async () =>
      Promise.all([
        fn<Usage>('getModelUsageForCli', { orgSlug, days: DAYS }),
        fn<Limits>('getModelLimitsForCli', { orgSlug }),
      ]),
    [orgSlug],
  );
  const [by, setBy] = useState<By>('model');
  const [metric, setMetric] = useState<'cost' | 'tokens'>('cost');
  const [actionError, setActionError] = useState<unknown>(null);
  const [usage, limits] = data ?? [];
  const labels = new Map((limits?.keys ?? []).map((k) => [k.keyId, k.label]));
  const keyName = (id: string) =>
    id === '' ? 'before keys were counted' : (labels.get(id) ?? `revoked key ${id}`);
  const seriesOf = (r: Usage['rows'][number]) =>
    by === 'model' ? r.model : by === 'key' ? r.keyId : props.org.name;
  // Cost leaves out models without a price (their tokens still count under Tokens).
  const points = (usage?.rows ?? [])
    .filter((r) => metric === 'tokens' || r.costUsd !== null)
    .map((r) => ({
      day: r.day,
      series: seriesOf(r),
      value: metric === 'tokens' ? r.totalTokens : (r.costUsd ?? 0),
    }));
  const today = new Date().toISOString().slice(0, 10);
  const act = async (f: () => Promise<unknown>) => {
    setActionError(null);
    try {
      await f();
      reload();
    } catch (err) {
      setActionError(err);
    }
  };
  return (
    <Page
      title="AI spend"
      intro={`Model usage and cost of ${props.org.name}'s API keys through /v1/ai, last ${DAYS} days (UTC).`}
    >
      <ErrorNote error={error} />
      <ErrorNote error={actionError} />
      {usage && limits ? (
        <>
          <p class="spend-total" data-testid="spend-total">
            {usage.totals.costUsd === null ? 'No priced usage' : fmtUsd(usage.totals.costUsd)} in {DAYS} days
            · {usage.totals.requests} requests · {usage.totals.totalTokens} tokens
          </p>
          <fieldset class="env-switch">
            <legend>Split by</legend>
            {(Object.keys(BY) as By[]).map((b) => (
              <label key={b} class="radio">
                <input type="radio" name="spend-by" checked={by === b} onChange={() => setBy(b)} />
                {BY[b]}
              </label>
            ))}
          </fieldset>
          <fieldset class="env-switch">
            <legend>Show</legend>
            {(['cost', 'tokens'] as const).map((m) => (
              <label key={m} class="radio">
                <input
                  type="radio"
                  name="spend-metric"
                  checked={metric === m}
                  onChange={() => setMetric(m)}
                />
                {m === 'cost' ? 'Cost' : 'Tokens'}
              </label>
            ))}
          </fieldset>
          <SpendChart
            points={points}
            days={dayRange(today, DAYS)}
            label={`${metric === 'cost' ? 'Spend' : 'Tokens'} per day by ${BY[by].toLowerCase()}`}
            labelOf={by === 'key' ? keyName : undefined}
            format={metric === 'tokens' ? fmtTokens : undefined}
            empty={metric === 'tokens' ? 'No model calls in this period.' : undefined}
          />
          <ModelTotals usage={usage} />
          <Budgets limits={limits} manager={isManager(props.org)} orgSlug={orgSlug} act={act} />
        </>
      ) : null}
    </Page>
  );
}

function ModelTotals({ usage }: { usage: Usage }) {
  const per = new Map<string, { model: string; requests: number; tokens: number; cost: number | null }>();
  for (const r of usage.rows) {
    const m = per.get(r.model) ?? { model: r.model, requests: 0, tokens: 0, cost: null };
    m.requests += r.requests;
    m.tokens += r.totalTokens;
    if (r.costUsd !== null) m.cost = (m.cost ?? 0) + r.costUsd;
    per.set(r.model, m);
  }
  return (
    <Table
      label="Spend per model"
      rows={[...per.values()]}
      rowKey={(m) => m.model}
      empty="No model calls in this period."
      columns={[
        { key: 'model', header: 'Model', cell: (m) => m.model },
        { key: 'requests', header: 'Requests', cell: (m) => String(m.requests) },
        { key: 'tokens', header: 'Tokens', cell: (m) => String(m.tokens) },
        { key: 'cost', header: 'Cost', cell: (m) => (m.cost === null ? 'no price' : fmtUsd(m.cost)) },
      ]}
    />
  );
}

type Act = (f: () => Promise<unknown>) => Promise<void>;

function Budgets(props: { limits: Limits; manager: boolean; orgSlug: string; act: Act }) {
  const { limits, orgSlug, act } = props;
  const o = limits.organization;
  const budget = (b: number | null) => (b === null ? 'none' : fmtUsd(b));
  return (
    <section aria-labelledby="budgets-title" class="budgets">
      <h2 id="budgets-title">Budgets this month (from {limits.periodStart}, UTC)</h2>
      <p data-testid="org-budget">
        Organization: {fmtUsd(o.spentUsd)} spent of {budget(o.monthlyBudgetUsd)}
        {o.monthlyBudgetUsd ? <meter min={0} max={o.monthlyBudgetUsd} value={o.spentUsd} /> : null}
      </p>
      <Table
        label="API key budgets"
        rows={limits.keys}
        rowKey={(k) => k.keyId}
        empty="No API keys."
        columns={[
          { key: 'label', header: 'API key', cell: (k) => k.label },
          { key: 'spent', header: 'Spent', cell: (k) => fmtUsd(k.spentUsd) },
          { key: 'budget', header: 'Monthly budget', cell: (k) => budget(k.monthlyBudgetUsd) },
          {
            key: 'models',
            header: 'Models',
            cell: (k) => (k.allowedModels ? k.allowedModels.join(', ') : 'any'),
          },
        ]}
      />
      {props.manager ? (
        <form
          class="inline-form"
          aria-label="Set a budget"
          onSubmit={(e) => {
            e.preventDefault();
            const f = new FormData(e.currentTarget as HTMLFormElement);
            const keyId = String(f.get('scope'));
            const amount = String(f.get('amount')).trim();
            void act(() =>
              fn('setModelBudgetForCli', {
                orgSlug,
                ...(keyId ? { keyId } : {}),
                monthlyUsd: amount === '' ? null : Number(amount),
              }),
            );
          }}
        >
          <label>
            Budget for
            <select name="scope">
              <option value="">the organization</option>
              {limits.keys.map((k) => (
                <option key={k.keyId} value={k.keyId}>
                  {k.label}
                </option>
              ))}
            </select>
          </label>
          <label>
            USD per month (empty: none)
            <input name="amount" type="number" min={0} step="any" />
          </label>
          <button type="submit">Set budget</button>
        </form>
      ) : null}
      {props.manager && limits.keys.length ? (
        <form
          class="inline-form"
          aria-label="Set allowed models"
          onSubmit={(e) => {
            e.preventDefault();
            const f = new FormData(e.currentTarget as HTMLFormElement);
            const models = String(f.get('models'))
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean);
            void act(() =>
              fn('setModelAllowListForCli', {
                orgSlug,
                keyId: String(f.get('key')),
                models: models.length ? models : null,
              }),
            );
          }}
        >
          <label>
            Models of
            <select name="key">
              {limits.keys.map((k) => (
                <option key={k.keyId} value={k.keyId}>
                  {k.label}
                </option>
              ))}
            </select>
          </label>
          <label>
            Allowed models, comma-separated, * as wildcard (empty: any)
            <input name="models" maxLength={2000} />
          </label>
          <button type="submit">Set models</button>
        </form>
      ) : null}
    </section>
  );
}
