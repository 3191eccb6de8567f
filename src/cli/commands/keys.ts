import { type Command, Option } from 'commander';
import type { CliContext } from '../context.ts';
import { fields, table, toJson, wantsJson } from '../output.ts';

// pier keys create | list | revoke — v1 API keys of an organization (sk_live.… acts in production,
// sk_test.… in the sandbox). A new key is printed once; only its key id is shown afterwards.

const KINDS = ['live', 'test'] as const;

export function register(program: Command, ctx: CliContext): void {
  const keys = program.command('keys').description("Manage an organization's v1 API keys");

  keys
    .command('create')
    .description('Create an API key (owner or admin); the key is shown once')
    .requiredOption('--org <slug>', 'organization slug')
    .addOption(
      new Option('--kind <kind>', 'live (production) or test (sandbox)').choices(KINDS).makeOptionMandatory(),
    )
    .option('--label <label>', 'label')
    .action(async (opts: { org: string; kind: (typeof KINDS)[number]; label?: string }, cmd: Command) => {
      const k = await ctx.userClient().call('createApiKeyForCli', {
        orgSlug: opts.org,
        kind: opts.kind,
        ...(opts.label ? { label: opts.label } : {}),
      });
      ctx.io.stdout.write(
        wantsJson(cmd)
          ? toJson(k)
          : `${fields([
              ['key', k.key],
              ['key id', k.keyId],
              ['kind', k.kind],
              ['label', k.label],
            ])}Store the key now; it is not shown again.\n`,
      );
    });

  keys
    .command('list')
    .alias('ls')
    .description("List an organization's API keys that are not revoked")
    .requiredOption('--org <slug>', 'organization slug')
    .action(async (opts: { org: string }, cmd: Command) => {
      const rows = await ctx.userClient().call('listApiKeysForCli', { orgSlug: opts.org });
      ctx.io.stdout.write(
        wantsJson(cmd)
          ? toJson(rows)
          : table(
              rows,
              [
                { header: 'key id', value: (r) => r.keyId },
                { header: 'kind', value: (r) => r.kind },
                { header: 'label', value: (r) => r.label },
                { header: 'created at', value: (r) => r.createdAt },
                { header: 'last used', value: (r) => r.lastUsedAt ?? '-' },
              ],
              `No API keys in ${opts.org}.`,
            ),
      );
    });

  keys
    .command('revoke')
    .description('Revoke an API key (owner or admin); it stops working at once')
    .argument('<keyId>', 'the key id (the middle part of sk_live.<keyId>.<secret>)')
    .requiredOption('--org <slug>', 'organization slug')
    .action(async (keyId: string, opts: { org: string }, cmd: Command) => {
      const r = await ctx.userClient().call('revokeApiKeyForCli', { orgSlug: opts.org, keyId });
      ctx.io.stdout.write(wantsJson(cmd) ? toJson(r) : `Revoked API key ${r.keyId}.\n`);
    });
}
