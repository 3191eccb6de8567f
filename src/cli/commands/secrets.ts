import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import { usageError } from '../errors.ts';
import { table, toJson, wantsJson } from '../output.ts';
import { readSecret } from '../prompt.ts';

// pier secrets set | rm | list — values are write-only: never printed, never read back. `set --build` marks a
// secret for the app's builds (decision 108).

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
    .option('--build', "also give it to the app's builds (it may end up in the built pages)")
    .option(
      '--no-build',
      'keep it out of the builds again (VITE_/PUBLIC_/NEXT_PUBLIC_ names still reach them)',
    )
    .action(
      async (
        key: string,
        value: string | undefined,
        opts: { project: string; build?: boolean },
        cmd: Command,
      ) => {
        const v = value ?? (await readSecret(ctx.io.stdin, ctx.io.stderr, `Value for ${key} (not shown): `));
        if (v === '') throw usageError('The value is empty; pass it as an argument or on stdin.');
        const client = ctx.userClient();
        const res = await client.call('setSecretForCli', { projectSlug: opts.project, key, value: v });
        // Without --build/--no-build an existing mark stays as it was (setting a value again keeps it).
        const mark =
          opts.build === undefined
            ? null
            : await client.call('setSecretBuildForCli', {
                projectSlug: opts.project,
                key,
                build: opts.build,
              });
        const note = !mark
          ? ''
          : mark.reachesBuild
            ? ' It reaches the builds from the next deploy on.'
            : ' It stays out of the builds.';
        ctx.io.stdout.write(
          wantsJson(cmd)
            ? toJson({ ...res, project: opts.project, ...(mark ? { build: mark.build } : {}) })
            : `Set ${res.key} on ${opts.project}.${note}\n`,
        );
      },
    );

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
      const client = ctx.userClient();
      const secretRows = await client.call('listSecretsForCli', { projectSlug: opts.project });
      const build = new Map(
        (await client.call('listBuildSecretsForCli', { projectSlug: opts.project })).map((b) => [
          b.key,
          b.marked ? 'yes (--build)' : 'yes (prefix)',
        ]),
      );
      const rows = secretRows.map((r) => ({ ...r, build: build.has(r.key) }));
      ctx.io.stdout.write(
        wantsJson(cmd)
          ? toJson(rows)
          : table(
              rows,
              [
                { header: 'key', value: (r) => r.key },
                { header: 'updated at', value: (r) => r.updatedAt },
                { header: 'build', value: (r) => build.get(r.key) ?? 'no' },
              ],
              `No secrets on ${opts.project}.`,
            ),
      );
    });
}
