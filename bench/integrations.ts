// Benchmark: a page of 100 unified contacts through Pier (GET /v1/integrations/crm/contacts?limit=100 on a
// HubSpot connection) against the same page asked of the fake HubSpot directly, in the same run with the
// same autocannon settings; then a load across forced token refreshes (every access token revoked at the
// provider mid-run) that must finish with zero failed calls.
//
//   npm run bench:integrations
//   BENCH_DURATION=10 BENCH_REFRESH_DURATION=60 BENCH_CONNECTIONS=10   tune the load
//
// Pier runs in this process on PGlite (as the test harness builds it) with the fake provider beside it.
import { createRequire } from 'node:module';
import { connect } from '../test/integrations-kit.ts';
import { seedV1Tenant } from '../test/seed.ts';
import { v1Client } from '../test/v1-client.ts';
import { startIntegrationsBench } from './integrations-pier.ts';

const require = createRequire(import.meta.url);
type Result = {
  requests: { average: number; total: number };
  latency: { p99: number; average: number };
  non2xx: number;
  errors: number;
};
const autocannon = require('autocannon') as (opts: Record<string, unknown>) => Promise<Result>;

const duration = Number(process.env.BENCH_DURATION ?? 10);
const refreshDuration = Number(process.env.BENCH_REFRESH_DURATION ?? 60);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);

const { hubspot, t } = await startIntegrationsBench(100);
const tenant = await seedV1Tenant(t.deps);
const connectionId = await connect(t, v1Client(t, tenant.live), hubspot, 'hubspot');

// A token valid at the fake, for the direct baseline.
const direct = hubspot.calls.at(-1)!.token;
const pierUrl = `${t.url}/v1/integrations/crm/contacts?connectionId=${connectionId}&limit=100`;
const directUrl = `${hubspot.url}/crm/v3/objects/contacts?limit=100&properties=firstname,lastname,email,phone,jobtitle,createdate,lastmodifieddate&associations=companies`;

const run = (url: string, token: string, seconds: number) =>
  autocannon({ url, connections, duration: seconds, headers: { authorization: `Bearer ${token}` } });

// Warm up both paths.
await run(pierUrl, tenant.live, 2);
await run(directUrl, direct, 2);

// Two provider latencies: 0 (the fake answers at once, so the ratio is Pier's CPU against a trivial server's)
// and BENCH_PROVIDER_LATENCY_MS (default 100, a real provider's answer time, what a client of Pier sees).
for (const latency of [0, Number(process.env.BENCH_PROVIDER_LATENCY_MS ?? 100)]) {
  hubspot.setLatency(latency);
  const viaPier = await run(pierUrl, tenant.live, duration);
  const baseline = await run(directUrl, hubspot.calls.at(-1)!.token, duration);
  const ratio = viaPier.requests.average / baseline.requests.average;
  console.log(
    `page of 100 contacts, provider latency ${latency} ms: pier ${viaPier.requests.average.toFixed(0)} req/s (p99 ${viaPier.latency.p99} ms, non2xx ${viaPier.non2xx}) · ` +
      `provider directly ${baseline.requests.average.toFixed(0)} req/s (p99 ${baseline.latency.p99} ms) · ratio ${ratio.toFixed(3)}`,
  );
}
hubspot.setLatency(Number(process.env.BENCH_PROVIDER_LATENCY_MS ?? 100));

// Load across refreshes: every few seconds every access token dies at the provider; each in-flight call
// meets a 401, one refresh runs per connection (the lease), and every call must still succeed.
const grantsBefore = hubspot.tokenGrants.filter((g) => g.grant === 'refresh_token').length;
const killer = setInterval(() => hubspot.expireAccessTokens(), 5000);
const across = await run(pierUrl, tenant.live, refreshDuration);
clearInterval(killer);
const refreshes = hubspot.tokenGrants.filter((g) => g.grant === 'refresh_token').length - grantsBefore;
console.log(
  `${refreshDuration} s across ${refreshes} token refreshes: ${across.requests.total} calls, ${across.non2xx} non-2xx, ${across.errors} errors, ` +
    `${across.requests.average.toFixed(0)} req/s, p99 ${across.latency.p99} ms`,
);

await t.close();
await hubspot.close();
process.exit(across.non2xx + across.errors === 0 ? 0 : 1);
