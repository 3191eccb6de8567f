import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A real HTTP server on 127.0.0.1:0 for a vendor fake: records every request and can be told to fail
// the next requests with a status (to exercise retries and error mapping).

export type Recorded = { method: string; path: string; headers: http.IncomingHttpHeaders; body: unknown };
export type FakeHandler = (req: Recorded, res: http.ServerResponse) => void | Promise<void>;

export type FakeServer = {
  url: string;
  requests: Recorded[];
  failNext(status: number, times?: number, headers?: Record<string, string>): void;
  /**
   * Holds every request from now on until released: `step()` lets the oldest held one through, `release()`
   * lets all through and stops holding. `held()` counts the requests waiting.
   */
  hold(): { step(): void; release(): void; held(): number };
  close(): Promise<void>;
};

export async function startFake(handler: FakeHandler): Promise<FakeServer> {
  const requests: Recorded[] = [];
  const failures: { status: number; headers: Record<string, string> }[] = [];
  let gate: { waiting: (() => void)[] } | null = null;
  const server = http.createServer(async (req, res) => {
    if (gate) {
      const g = gate;
      await new Promise<void>((ok) => g.waiting.push(ok));
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {}
    const rec = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body };
    requests.push(rec);
    const fail = failures.shift();
    if (fail) {
      res.writeHead(fail.status, { 'content-type': 'application/json', ...fail.headers });
      res.end(JSON.stringify({ error: { message: `fake failure ${fail.status}`, type: 'server_error' } }));
      return;
    }
    try {
      await handler(rec, res);
    } catch (err) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: String(err) } }));
    }
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    failNext: (status, times = 1, headers = {}) => {
      for (let i = 0; i < times; i++) failures.push({ status, headers });
    },
    hold: () => {
      const g = { waiting: [] as (() => void)[] };
      gate = g;
      return {
        step: () => g.waiting.shift()?.(),
        release: () => {
          if (gate === g) gate = null;
          for (const ok of g.waiting.splice(0)) ok();
        },
        held: () => g.waiting.length,
      };
    },
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

export function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export function sse(res: http.ServerResponse, events: (string | { event?: string; data: unknown })[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const e of events) {
    if (typeof e === 'string') res.write(`data: ${e}\n\n`);
    else res.write(`${e.event ? `event: ${e.event}\n` : ''}data: ${JSON.stringify(e.data)}\n\n`);
  }
  res.end();
}

export const words = (s: string) => s.split(/\s+/).filter(Boolean);

/** The deterministic reply every fake gives: which vendor answered and the last thing the user said. */
export function replyText(vendor: string, lastUser: string): string {
  return `${vendor} says: ${lastUser}`;
}

type Schema = { type?: string; properties?: Record<string, Schema>; items?: Schema };

/** A value of a JSON schema filled with sample values derived from `seed` (structured output, tool args). */
export function sample(schema: Schema, seed: string): unknown {
  // Google's declarations write types in capitals (OBJECT, STRING).
  const type = schema.type?.toLowerCase();
  if (type === 'object')
    return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, sample(v, seed)]));
  if (type === 'array') return [sample(schema.items ?? {}, seed)];
  if (type === 'number' || type === 'integer') return seed.length;
  if (type === 'boolean') return true;
  return seed;
}

/**
 * The fakes' tool behaviour, the same for every vendor: offered tools and not yet answered, the model calls
 * them (all, at most two, or only the first when parallel calls are off) with sample arguments; after a
 * tool result it answers in text, quoting the result.
 */
export function toolCalls(
  tools: { name: string; schema?: Schema }[],
  last: string,
  parallel = true,
): { id: string; name: string; input: unknown }[] {
  return tools
    .slice(0, parallel ? 2 : 1)
    .map((t, i) => ({ id: `call_fake_${i + 1}`, name: t.name, input: sample(t.schema ?? {}, last) }));
}

export const toolAnswer = (vendor: string, result: string) => `${vendor} says: the tool said ${result}`;
