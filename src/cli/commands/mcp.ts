import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import { toJson, wantsJson } from '../output.ts';

// pier mcp: the configuration that adds Pier to an MCP client (docs/mcp.md), for the signed-in user.

/** The `mcpServers` entry most clients read (Claude Desktop, Cursor, Windsurf, VS Code's `servers`). */
export function mcpClientConfig(baseUrl: string, token: string | null) {
  const url = `${baseUrl.replace(/\/+$/, '')}/mcp`;
  return {
    mcpServers: {
      pier: {
        type: 'http',
        url,
        // Without a header, clients that speak MCP authorization sign in with OAuth in the browser.
        ...(token ? { headers: { Authorization: `Bearer ${token}` } } : {}),
      },
    },
  };
}

export function register(program: Command, ctx: CliContext): void {
  program
    .command('mcp')
    .description('Print the MCP client configuration for this Pier (add --new-token to include a token)')
    .option('--new-token', 'mint a personal token labelled "MCP client" and put it in the configuration')
    .action(async (opts: { newToken?: boolean }, cmd: Command) => {
      const client = ctx.userClient();
      const me = await client.call('whoamiForCli');
      const minted = opts.newToken ? await client.call('createTokenForCli', { label: 'MCP client' }) : null;
      const config = mcpClientConfig(ctx.url(), minted?.token ?? null);
      const url = config.mcpServers.pier.url;
      if (wantsJson(cmd)) {
        ctx.io.stdout.write(toJson({ user: me.user.email, url, config }));
        return;
      }
      const header = minted ? ` --header "Authorization: Bearer ${minted.token}"` : '';
      ctx.io.stdout.write(
        [
          `Pier's MCP server for ${me.user.email}: ${url}`,
          '',
          'Add it to your client (Claude Desktop, Cursor, VS Code…):',
          JSON.stringify(config, null, 2),
          '',
          `Claude Code: claude mcp add --transport http pier ${url}${header}`,
          '',
          minted
            ? `The token '${minted.label}' (${minted.keyId}) is shown once; revoke it with the dashboard's tokens page.`
            : 'Without a token the client signs in in the browser (OAuth); --new-token puts a personal token in instead.',
          '',
        ].join('\n'),
      );
    });
}
