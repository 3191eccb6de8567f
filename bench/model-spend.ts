// What spend tracking, budgets and allow-lists add to a model-proxy call.
//
//   npm run bench:model-spend            BENCH_REQUESTS=400 per variant (default)
//
// Pier on PGlite in this process, the OpenAI-compatible fake upstream of the tests on loopback, requests
// over real HTTP with fetch, one at a time, the variants interleaved so both see the same machine load:
//   A. a key without limits (the pre-call check finds none in its cache: no query);
//   B. a key with a monthly budget and a model allow-list (cached limits, and the month's spend sum, read
//      again after each usage write of the organization or after 1 s).
// Prints the p50/p90 of each, B / A, and the pre-call check alone (checkCall, in-process) per variant as a
// share of A's p50.

import { startOpenAIServer } from '../test/fakes/openai-server.ts';
import { startBenchPier } from './bench-pier.ts';

const N = Number(process.env.BENCH_REQUESTS ?? 400);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const ms = (n: number) => `${n.toFixed(2)} ms`;

async function main(): Promise<void> {
  const upstream = await startOpenAIServer('openai');
  const pier = await startBenchPier({
    prefix: 'pier-bench-spend-',
    project: false,
    env: {
      LOG_LEVEL: 'warn',
      OPENAI_API_KEY: 'sk-bench',
      OPENAI_BASE_URL: `${upstream.url}/v1`,
      // The v1 rate limit is not what is measured.
      V1_RATE_LIMIT_PER_SEC: '100000',
      V1_RATE_LIMIT_BURST: '1000000',
    },
  });
  const { issueApiKey } = await import('../src/areas/orgs/api-keys.ts');
  const { modelLimits } = await import('../src/areas/models/tables.ts');
  const { checkCall } = await import('../src/areas/models/budgets.ts');
  const { UsageBuffer } = await import('../src/areas/models/model-usage.ts');
  const { PriceList } = await import('../src/areas/models/prices.ts');
  const { deps, org } = pier;
  const plain = await issueApiKey(deps, org.id, 'live', 'plain');
  const limited = await issueApiKey(deps, org.id, 'live', 'limited');
  await deps.db.orm.insert(modelLimits).values({
    orgId: org.id,
    keyId: limited.row.keyId,
    monthlyBudgetUsd: 1_000_000,
    allowedModels: ['gpt-4o-*'],
  });
  await pier.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(pier.app.server.address() as { port: number }).port}/v1/ai`;
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }] });
  const call = async (key: string) => {
    const t0 = performance.now();
    const r = await fetch(`${base}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body,
    });
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`status ${r.status}`);
    return performance.now() - t0;
  };
  // Warm-up: credential caches, resolution cache, JIT; the spend rows of this month exist after it.
  for (let i = 0; i < 50; i++) await Promise.all([call(plain.token), call(limited.token)]);
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < N; i++) {
    a.push(await call(plain.token));
    b.push(await call(limited.token));
  }
  // The check alone, as the proxy calls it.
  const prices = new PriceList();
  const usage = new UsageBuffer(deps, prices);
  const check = async (keyId: string) => {
    const t0 = performance.now();
    await checkCall(deps, usage, prices, {
      orgId: org.id,
      keyId,
      model: 'openai/gpt-4o-mini',
      requested: 'gpt-4o-mini',
      inputChars: 11,
    });
    return performance.now() - t0;
  };
  const ca: number[] = [];
  const cb: number[] = [];
  for (let i = 0; i < N; i++) {
    ca.push(await check(plain.row.keyId));
    cb.push(await check(limited.row.keyId));
  }
  const [pa, pb] = [pct(a, 50), pct(b, 50)];
  console.log(`model spend bench: ${N} sequential chat completions per variant, PGlite, loopback upstream`);
  console.log(`A  key without limits            p50 ${ms(pa)}  p90 ${ms(pct(a, 90))}`);
  console.log(`B  key with budgets + allow-list p50 ${ms(pb)}  p90 ${ms(pct(b, 90))}`);
  console.log(`B / A p50: ${(pb / pa).toFixed(3)}×  (${ms(pb - pa)} added)`);
  console.log(
    `pre-call check alone: no limits p50 ${ms(pct(ca, 50))} (${((pct(ca, 50) / pa) * 100).toFixed(1)} % of A), ` +
      `budgets + allow-list p50 ${ms(pct(cb, 50))} (${((pct(cb, 50) / pa) * 100).toFixed(1)} % of A)`,
  );
  await usage.flush();
  await pier.close();
  await upstream.close();
}

await main();
