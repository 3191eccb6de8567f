// The model proxy's cost (`npm run bench:model-proxy`): the official openai client calling a local
// OpenAI-compatible upstream directly (the baseline) versus through Pier's /v1/ai, interleaved in the same
// run so both see the same machine load.
//  1. added latency per non-streamed request (p50), plain and with a tool call answered;
//  2. time to the first streamed token, against an upstream that thinks 40 ms (BENCH_FIRST_TOKEN_MS) before
//     its first token and then sends one every 2 ms (a real model's shape, shortened), as a ratio of direct.
// Targets (issue 38): < 5 ms p50 added; first token within 1.1× direct.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { seedApiKey } from '../test/seed.ts';
import { startBenchPier } from './bench-pier.ts';

const N = Number(process.env.BENCH_N ?? 300);
const N_STREAM = Number(process.env.BENCH_N_STREAM ?? 100);
const FIRST_TOKEN_MS = Number(process.env.BENCH_FIRST_TOKEN_MS ?? 40);
const TOKEN_GAP_MS = 2;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)]!;
const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/** A minimal OpenAI chat completions server: JSON at once, or SSE after FIRST_TOKEN_MS. */
async function startUpstream() {
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      stream?: boolean;
      tools?: unknown[];
    };
    const base = { id: 'cmpl-bench', created: 1_700_000_000, model: 'gpt-4o-mini' };
    const usage = { prompt_tokens: 3, completion_tokens: 8, total_tokens: 11 };
    if (!body.stream) {
      const message = body.tools?.length
        ? {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'call_1',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
              },
            ],
          }
        : { role: 'assistant', content: 'one two three four five six seven eight' };
      const finish_reason = body.tools?.length ? 'tool_calls' : 'stop';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          ...base,
          object: 'chat.completion',
          choices: [{ index: 0, message, finish_reason }],
          usage,
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (delta: unknown, finish: string | null) =>
      `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    await sleep(FIRST_TOKEN_MS);
    res.write(chunk({ role: 'assistant', content: '' }, null));
    for (const w of 'one two three four five six seven eight'.split(' ')) {
      res.write(chunk({ content: `${w} ` }, null));
      await sleep(TOKEN_GAP_MS);
    }
    res.write(chunk({}, 'stop'));
    res.write(
      `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage })}\n\n`,
    );
    res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const upstream = await startUpstream();
const pier = await startBenchPier({
  prefix: 'pier-bench-model-proxy-',
  project: false,
  env: {
    LOG_LEVEL: 'warn',
    OPENAI_API_KEY: 'sk-bench',
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    V1_RATE_LIMIT_BURST: '1000000',
    V1_RATE_LIMIT_PER_SEC: '100000',
  },
});
const base = await pier.app.listen({ port: 0, host: '127.0.0.1' });
const key = await seedApiKey(pier.deps, pier.org.id, 'live');
const direct = new OpenAI({ apiKey: 'sk-bench', baseURL: `${upstream.url}/v1`, maxRetries: 0 });
const proxied = new OpenAI({ apiKey: key.key, baseURL: `${base}/v1/ai`, maxRetries: 0 });

const weather = {
  type: 'function' as const,
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};
const plain = (c: OpenAI) =>
  c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'benchmark me' }] });
const withTool = (c: OpenAI) =>
  c.chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'Paris' }],
    tools: [weather],
  });
/** Milliseconds until the first content token arrives (the stream is then read to its end). */
async function firstToken(c: OpenAI): Promise<number> {
  const t0 = performance.now();
  const stream = await c.chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'benchmark me' }],
    stream: true,
  });
  let first = 0;
  for await (const ch of stream) if (!first && ch.choices[0]?.delta.content) first = performance.now() - t0;
  return first;
}

async function compare(label: string, op: (c: OpenAI) => Promise<unknown>, n: number) {
  for (let i = 0; i < 20; i++) {
    await op(direct);
    await op(proxied);
  }
  const d: number[] = [];
  const p: number[] = [];
  for (let i = 0; i < n; i++) {
    let t0 = performance.now();
    await op(direct);
    d.push(performance.now() - t0);
    t0 = performance.now();
    await op(proxied);
    p.push(performance.now() - t0);
  }
  const [dp, pp] = [pct(d, 0.5), pct(p, 0.5)];
  console.log(
    `${label} (${n}): direct p50 ${dp.toFixed(2)} ms, via Pier ${pp.toFixed(2)} ms → added ${(pp - dp).toFixed(2)} ms ` +
      `(p95 ${pct(d, 0.95).toFixed(2)} / ${pct(p, 0.95).toFixed(2)} ms)`,
  );
}

async function compareFirstToken(n: number) {
  for (let i = 0; i < 5; i++) {
    await firstToken(direct);
    await firstToken(proxied);
  }
  const d: number[] = [];
  const p: number[] = [];
  for (let i = 0; i < n; i++) {
    d.push(await firstToken(direct));
    p.push(await firstToken(proxied));
  }
  const [dp, pp] = [pct(d, 0.5), pct(p, 0.5)];
  console.log(
    `first streamed token (${n}, upstream ${FIRST_TOKEN_MS} ms to its first token): direct p50 ${dp.toFixed(2)} ms, ` +
      `via Pier ${pp.toFixed(2)} ms → ${(pp / dp).toFixed(3)}× direct (+${(pp - dp).toFixed(2)} ms; p95 ` +
      `${pct(d, 0.95).toFixed(2)} / ${pct(p, 0.95).toFixed(2)} ms)`,
  );
}

await compare('chat completion', plain, N);
await compare('chat completion answered with a tool call', withTool, N);
await compareFirstToken(N_STREAM);
await pier.app.close();
await pier.close();
upstream.server.closeAllConnections();
upstream.server.close();
