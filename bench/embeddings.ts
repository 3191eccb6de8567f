// Benchmarks for the models area (`npm run bench:embeddings`):
//  1. the local embedder's throughput (texts/s), against a baseline of only tokenizing the same texts;
//  2. the model proxy's added latency: the official openai client calling the stub OpenAI server directly
//     (baseline) versus through Pier's /v1/ai (PGlite in memory), both measured in this run.
import OpenAI from 'openai';
import { embedLocal, tokenize } from '../src/core/ai/local-embedder.ts';
import { startOpenAIServer } from '../test/fakes/openai-server.ts';
import { testApp } from '../test/harness.ts';
import { seedApiKey, seedOrg } from '../test/seed.ts';

const WORDS =
  'invoice customer delivery order payment chair table office berlin march shipping warehouse refund ' +
  'account password reset support ticket priority email calendar meeting project budget quarter report';
const vocab = WORDS.split(' ');
let seed = 42;
const rand = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};
const sentence = (n: number) =>
  Array.from({ length: n }, () => vocab[Math.floor(rand() * vocab.length)]).join(' ');

function time(fn: () => void): number {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)]!;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

async function embedderThroughput() {
  const texts = Array.from({ length: 5000 }, () => sentence(40)); // ~40 words, a typical memory note
  embedLocal(texts[0]!); // warm up
  time(() => {
    for (const t of texts.slice(0, 500)) embedLocal(t);
  });
  const base = time(() => {
    for (const t of texts) tokenize(t);
  });
  const ms = time(() => {
    for (const t of texts) embedLocal(t);
  });
  const rate = (texts.length / ms) * 1000;
  console.log(`local embedder (384 dims, 40-word texts): ${rate.toFixed(0)} texts/s`);
  console.log(
    `  baseline tokenize only: ${((texts.length / base) * 1000).toFixed(0)} texts/s; embed/tokenize time ratio ${(ms / base).toFixed(2)}x`,
  );
}

async function proxyLatency() {
  const stub = await startOpenAIServer();
  // The test clock is frozen, so the key's v1 bucket would never refill: a huge burst keeps its upsert (a cost
  // the proxy pays per request) in the measurement without refusing the run's ~1,300 requests.
  const t = await testApp({
    env: { OPENAI_API_KEY: 'sk-bench', OPENAI_BASE_URL: `${stub.url}/v1`, V1_RATE_LIMIT_BURST: '1000000' },
  });
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { org } = await seedOrg(t.deps);
  const key = await seedApiKey(t.deps, org.id);
  const direct = new OpenAI({ apiKey: 'sk-bench', baseURL: `${stub.url}/v1`, maxRetries: 0 });
  const proxied = new OpenAI({ apiKey: key.key, baseURL: `${base}/v1/ai`, maxRetries: 0 });
  const chat = (c: OpenAI) =>
    c.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'benchmark me' }],
    });
  const embed = (c: OpenAI) =>
    c.embeddings.create({ model: 'text-embedding-3-small', input: ['one text', 'two'] });
  const run = async (label: string, op: (c: OpenAI) => Promise<unknown>, n: number) => {
    for (let i = 0; i < 20; i++) {
      await op(direct);
      await op(proxied);
    }
    const d: number[] = [];
    const p: number[] = [];
    // interleaved, so both see the same machine load
    for (let i = 0; i < n; i++) {
      let t0 = performance.now();
      await op(direct);
      d.push(performance.now() - t0);
      t0 = performance.now();
      await op(proxied);
      p.push(performance.now() - t0);
    }
    console.log(
      `${label}: direct p50 ${pct(d, 0.5).toFixed(2)} ms, via proxy p50 ${pct(p, 0.5).toFixed(2)} ms ` +
        `(added ${(pct(p, 0.5) - pct(d, 0.5)).toFixed(2)} ms, ratio ${(pct(p, 0.5) / pct(d, 0.5)).toFixed(2)}x); ` +
        `p95 ${pct(d, 0.95).toFixed(2)} / ${pct(p, 0.95).toFixed(2)} ms; mean ${mean(d).toFixed(2)} / ${mean(p).toFixed(2)} ms`,
    );
  };
  // Context: the floor of any request to this Pier process (GET /healthz) and to the stub, same load.
  const floor = async (url: string) => {
    const xs: number[] = [];
    for (let i = 0; i < 300; i++) {
      const t0 = performance.now();
      await (await fetch(url)).arrayBuffer();
      xs.push(performance.now() - t0);
    }
    return pct(xs, 0.5);
  };
  console.log(
    `HTTP floor: stub GET p50 ${(await floor(`${stub.url}/`)).toFixed(2)} ms, Pier GET /healthz p50 ${(await floor(`${base}/healthz`)).toFixed(2)} ms`,
  );
  await run('chat completion', chat, 300);
  await run('embeddings (2 texts)', embed, 300);
  await t.app.close();
  await t.close();
  await stub.close();
}

await embedderThroughput();
await proxyLatency();
