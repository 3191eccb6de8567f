import { type Command, Option } from 'commander';
import type { CliContext } from '../context.ts';
import { table, toJson, wantsJson } from '../output.ts';

// pier integrations connectors | connections | test — the operator's connectors and an organization's
// connections with the user's own token (the same functions as the dashboard's integrations page).

const ENVIRONMENTS = ['production', 'sandbox'] as const;
type Env = (typeof ENVIRONMENTS)[number];

const envOption = () =>
  new Option('--env <environment>', 'production (live keys) or sandbox (test keys)')
    .choices(ENVIRONMENTS)
    .default('production');

export function register(program: Command, ctx: CliContext): void {
  const integrations = program
    .command('integrations')
    .description('Look at integration connectors and connections');

  integrations
    .command('connectors')
    .description(
      'List the connectors, whether this Pier has their OAuth client, and the variables each needs',
    )
    .action(async (_opts: unknown, cmd: Command) => {
      const r = await ctx.userClient().call('listIntegrationConnectorsForCli', {});
      ctx.io.stdout.write(
        wantsJson(cmd)
          ? toJson(r)
          : table(
              r.data,
              [
                { header: 'slug', value: (c) => c.slug },
                { header: 'category', value: (c) => c.category },
                { header: 'configured', value: (c) => (c.configured ? 'yes' : 'no') },
                { header: 'needs', value: (c) => (c.configured ? '-' : c.env.required.join(' ')) },
              ],
              'No connectors.',
            ),
      );
    });

  integrations
    .command('connections')
    .description("List an organization's connections with status, end user and last use")
    .requiredOption('--org <slug>', 'organization slug')
    .addOption(envOption())
    .option('--connector <slug>', 'only this connector')
    .addOption(new Option('--status <status>', 'only this status').choices(['connected', 'error', 'expired']))
    .action(async (opts: { org: string; env: Env; connector?: string; status?: string }, cmd: Command) => {
      const r = await ctx.userClient().call('listIntegrationConnectionsForCli', {
        orgSlug: opts.org,
        environment: opts.env,
        ...(opts.connector ? { connectorSlug: opts.connector } : {}),
        ...(opts.status ? { status: opts.status as 'connected' | 'error' | 'expired' } : {}),
      });
      ctx.io.stdout.write(
        wantsJson(cmd)
          ? toJson(r)
          : table(
              r.data,
              [
                { header: 'id', value: (c) => c.id },
                { header: 'connector', value: (c) => c.connectorSlug },
                { header: 'status', value: (c) => c.status },
                { header: 'end user', value: (c) => c.endUserId },
                { header: 'account', value: (c) => c.externalAccountName },
                { header: 'last used', value: (c) => c.lastUsedAt },
                { header: 'reason', value: (c) => c.statusReason },
              ],
              `No connections in ${opts.org} (${opts.env}).`,
            ),
      );
    });

  integrations
    .command('test')
    .description('Ask the provider who a connection acts as; exits 1 when the provider refuses')
    .argument('<connectionId>', 'the connection id')
    .requiredOption('--org <slug>', 'organization slug')
    .addOption(envOption())
    .action(async (connectionId: string, opts: { org: string; env: Env }, cmd: Command) => {
      const r = await ctx.userClient().call('testIntegrationConnectionForCli', {
        orgSlug: opts.org,
        environment: opts.env,
        connectionId,
      });
      ctx.io.stdout.write(
        wantsJson(cmd)
          ? toJson(r)
          : r.success
            ? `Connection ${connectionId} works.\n`
            : `Connection ${connectionId} failed: ${r.error ?? 'the provider refused'}\n`,
      );
      // A connection that does not work is the answer, not a CLI failure; the exit status says it for scripts.
      if (!r.success) ctx.exitCode = 1;
    });
}
