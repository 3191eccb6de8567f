import { CopyButton } from '../ui.tsx';

// "Use Pier from an MCP client": the same configuration `pier mcp` prints (docs/mcp.md). With the token just
// minted on this page it is filled in; otherwise the client signs in with OAuth or takes a token by hand.

export function McpCard(props: { token?: string }) {
  const url = `${location.origin}/mcp`;
  const entry: Record<string, unknown> = { type: 'http', url };
  if (props.token) entry.headers = { Authorization: `Bearer ${props.token}` };
  const config = JSON.stringify({ mcpServers: { pier: entry } }, null, 2);
  const claude = `claude mcp add --transport http pier ${url}${props.token ? ` --header "Authorization: Bearer ${props.token}"` : ''}`;
  return (
    <section class="card" aria-labelledby="mcp-heading">
      <h2 id="mcp-heading">Use Pier from an MCP client</h2>
      <p class="hint">
        Coding agents reach every Pier operation as tools at <code>{url}</code>. Add this to Claude Desktop,
        Cursor or VS Code{props.token ? ' (it holds the token above)' : '; mint a token above to fill one in'}
        :
      </p>
      <pre data-copy={config}>{config}</pre>
      <CopyButton value={config} label="Copy configuration" />
      <p class="hint">Claude Code:</p>
      <pre data-copy={claude}>{claude}</pre>
      <CopyButton value={claude} label="Copy command" />
    </section>
  );
}
