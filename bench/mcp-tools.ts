// The size of the MCP tool list a client loads: `tools/list` (in-process, app.inject) for an owner's personal
// token (every user function, every v1 operation, deployApp) and a test API key (v1 operations). Prints the
// bytes of each answer, the part clients hand to the model (name, description, input schema), the tool
// count and the largest tools (docs/benchmarks.md "MCP tools/list").
//
//   node bench/mcp-tools.ts            PGlite in a temporary directory

import { startBenchPier } from './bench-pier.ts';

const { createLogger } = await import('../src/create-deps.ts');
const { logDestination } = await import('../src/core/log-destination.ts');
const { issueApiKey } = await import('../src/areas/orgs/index.ts');
const { app, deps, org, token, close } = await startBenchPier({
  prefix: 'pier-bench-mcp-tools-',
  log: (config) => createLogger(config, logDestination('/dev/null')),
  project: false,
});
try {
  const { token: key } = await issueApiKey(deps, org.id, 'test');
  const list = async (bearer: string) => {
    const res = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: {
        authorization: `Bearer ${bearer}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    if (res.statusCode !== 200) throw new Error(`tools/list: ${res.statusCode} ${res.body.slice(0, 300)}`);
    type Listed = { name: string; description?: string; inputSchema: unknown };
    const tools = (JSON.parse(res.body) as { result: { tools: Listed[] } }).result.tools;
    return { bytes: Buffer.byteLength(res.body), tools };
  };
  for (const [who, bearer] of [
    ['personal token (owner)', token],
    ['API key (test)', key],
  ] as const) {
    const { bytes, tools } = await list(bearer);
    // What the clients pass to the model of each tool (Anthropic's and OpenAI's tool definitions).
    const context = tools.reduce(
      (n, t) => n + Buffer.byteLength(JSON.stringify([t.name, t.description ?? '', t.inputSchema])),
      0,
    );
    const sizes = tools
      .map((t) => ({ name: t.name, bytes: Buffer.byteLength(JSON.stringify(t)) }))
      .sort((a, b) => b.bytes - a.bytes);
    console.log(
      `${who}: ${tools.length} tools, ${bytes} bytes (${(bytes / 1024).toFixed(1)} KiB), name + description + ` +
        `inputSchema ${context} bytes; largest: ` +
        sizes
          .slice(0, 3)
          .map((s) => `${s.name} ${s.bytes}`)
          .join(', '),
    );
  }
} finally {
  await close();
}
