// Benchmark: a page of 100 synced contacts read from Pier (GET /v1/integrations/records?limit=100, the
// records a sync copied into Pier's database) against the same page read live: from the provider directly,
// and through Pier's unified list (GET /v1/integrations/crm/contacts?limit=100), in the same run with the
// same autocannon settings, at two provider latencies (docs/benchmarks.md "Integrations: synced reads").
//
//   node bench/integrations-sync.ts
//   BENCH_DURATION=5 BENCH_CONNECTIONS=10 BENCH_PROVIDER_LATENCY_MS=100   tune the load
//
// Pier runs in this process on PGlite (as the test harness builds it) with the fake HubSpot beside it; the
// sync first copies 1,000 contacts.
import { createRequire } from 'node:module';
import { connect } from '../test/integrations-kit.ts';
import { seedV1Tenant } from '../test/seed.ts';
import { v1Client } from '../test/v1-client.ts';
import { startIntegrationsBench } from './integrations-pier.ts';

const require = createRequire(import.meta.url);
type Result = { requests: { average: number }; latency: { p50: number; p99: number }; non2xx: number };
const autocannon = require('autocannon') as (opts: Record<string, unknown>) => Promise<Result>;

const duration = Number(process.env.BENCH_DURATION ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);

const { hubspot, t } = await startIntegrationsBench(1000);
try {
  const tenant = await seedV1Tenant(t.deps);
  const api = v1Client(t, tenant.live);
  const connectionId = await connect(t, api, hubspot, 'hubspot');
  const sync = (await api.post('/integrations/syncs', { connectionId, model: 'contacts' })).json();
  const { runSync } = await import('../src/areas/integrations/sync-run.ts');
  const started = Date.now();
  const run = await runSync(t.deps, sync.id);
  console.log(
    `sync of 1,000 contacts: ${run?.added} added in ${Date.now() - started} ms (${run?.pages} pages)`,
  );

  const synced = `${t.url}/v1/integrations/records?connectionId=${connectionId}&model=contacts&limit=100`;
  const live = `${t.url}/v1/integrations/crm/contacts?connectionId=${connectionId}&limit=100`;
  const direct = `${hubspot.url}/crm/v3/objects/contacts?limit=100&properties=firstname,lastname,email,phone,jobtitle,createdate,lastmodifieddate&associations=companies`;
  const bench = (url: string, token: string, seconds = duration) =>
    autocannon({ url, connections, duration: seconds, headers: { authorization: `Bearer ${token}` } });
  const providerToken = () => hubspot.calls.at(-1)!.token;
  await bench(synced, tenant.live, 1);
  await bench(live, tenant.live, 1);

  for (const latency of [0, Number(process.env.BENCH_PROVIDER_LATENCY_MS ?? 100)]) {
    hubspot.setLatency(latency);
    const fromPier = await bench(synced, tenant.live);
    const fromProvider = await bench(direct, providerToken());
    const viaPierLive = await bench(live, tenant.live);
    const f = (r: Result) =>
      `${r.requests.average.toFixed(0)} req/s (p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, non2xx ${r.non2xx})`;
    console.log(
      `provider latency ${latency} ms: synced from Pier ${f(fromPier)} · provider directly ${f(fromProvider)} · ` +
        `live through Pier ${f(viaPierLive)} · synced/provider ${(fromPier.requests.average / fromProvider.requests.average).toFixed(2)}× · ` +
        `synced/live-through-Pier ${(fromPier.requests.average / viaPierLive.requests.average).toFixed(2)}×`,
    );
  }
} finally {
  await t.close();
  await hubspot.close();
}
