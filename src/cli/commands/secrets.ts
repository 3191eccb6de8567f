import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import { usageError } from '../errors.ts';
import { table, toJson, wantsJson } from '../output.ts';
import { readSecret } from '../prompt.ts';

// pier secrets set | rm | list — values are write-only: never printed, never read back.

export function register(program: Command, ctx: CliContext): void {
  const secrets = program
    .command('secrets')
    .description("Manage a project's secrets (environment variables)");

  secrets
    .command('set')
    .description('Create or replace a secret; the value comes from stdin when not given')
    .argument('<key>', 'SCREAMING_SNAKE_CASE key')
    .argument('[value]', 'the value (prefer stdin: arguments end up in shell history)')
    .requiredOption('--project <slug>', 'project slug')
    .action(async (key: string, value: string | undefined, opts: { project: string }, cmd: Command) => {
      const v = value ?? (await readSecret(ctx.io.stdin, ctx.io.stderr, `Value for ${key} (not shown): `));
      if (v === '') throw usageError('The value is empty; pass it as an argument or on stdin.');
      const res = await ctx
        .userClient()
        .call('setSecretForCli', { projectSlug: opts.project, key, value: v });
      ctx.io.stdout.write(
        wantsJson(cmd) ? toJson({ ...res, project: opts.project }) : `Set ${res.key} on ${opts.project}.\n`,
      );
    });

  secrets
    .command('rm')
    .alias('remove')
    .description('Remove a secret')
    .argument('<key>', 'key to remove')
    .requiredOption('--project <slug>', 'project slug')
    .action(async (key: string, opts: { project: string }, cmd: Command) => {
      const res = await ctx.userClient().call('removeSecretForCli', { projectSlug: opts.project, key });
      ctx.io.stdout.write(
        wantsJson(cmd)
          ? toJson({ ...res, project: opts.project })
          : res.removed
            ? `Removed ${res.key} from ${opts.project}.\n`
            : `${res.key} was not set on ${opts.project}; nothing removed.\n`,
      );
    });

  secrets
    .command('list')
    .alias('ls')
    .description("List a project's secret keys and when each was last set")
    .requiredOption('--project <slug>', 'project slug')
    .action(async (opts: { project: string }, cmd: Command) => {
      const rows = await ctx.userClient().call('listSecretsForCli', { projectSlug: opts.project });
      ctx.io.stdout.write(
        wantsJson(cmd)
          ? toJson(rows)
          : table(
              rows,
              [
                { header: 'key', value: (r) => r.key },
                { header: 'updated at', value: (r) => r.updatedAt },
              ],
              `No secrets on ${opts.project}.`,
            ),
      );
    });
}
