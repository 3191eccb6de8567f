import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import { table, toJson, wantsJson } from '../output.ts';

// pier orgs

export function register(program: Command, ctx: CliContext): void {
  program
    .command('orgs')
    .description('List your organizations and your role in each')
    .action(async (_opts: unknown, cmd: Command) => {
      const orgs = await ctx.userClient().call('listMyOrgsForCli');
      ctx.io.stdout.write(
        wantsJson(cmd)
          ? toJson(orgs)
          : table(
              orgs,
              [
                { header: 'slug', value: (o) => o.slug },
                { header: 'name', value: (o) => o.name },
                { header: 'role', value: (o) => o.role },
                { header: 'id', value: (o) => o.id },
              ],
              'You belong to no organization yet.',
            ),
      );
    });
}
