import { type Command, InvalidArgumentError, Option } from 'commander';
import type { CliContext } from '../context.ts';
import { fields, table, toJson, wantsJson } from '../output.ts';

// pier keys create | list | revoke — v1 API keys of an organization (sk_live.… acts in production,
// sk_test.… in the sandbox). A new key is printed once; only its key id is shown afterwards.

const KINDS = ['live', 'test'] as const;

export function positive(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0)
    throw new InvalidArgumentError('Not a positive number.');
  return n;
}

export type LimitOpts = { perSec?: number; burst?: number };

/** --per-sec and --burst go together: a key's own v1 bucket (docs/v1-api.md, "Rate limits"). */
export function rateLimitOf(opts: LimitOpts, cmd: Command): { perSec: number; burst: number } | undefined {
  if (opts.perSec === undefined && opts.burst === undefined) return undefined;
  if (opts.perSec === undefined || opts.burst === undefined)
    cmd.error('Give --per-sec and --burst together.');
  return { perSec: opts.perSec, burst: opts.burst };
}

const limitText = (l: { perSec: number; burst: number } | null) =>
  l ? `${l.perSec}/s, burst ${l.burst}` : "the plan's";

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
    .option('--per-sec <n>', "the key's own v1 rate limit: requests per second (with --burst)", positive)
    .option('--burst <n>', "the key's own v1 rate limit: burst (with --per-sec)", positive)
    .action(
      async (
        opts: { org: string; kind: (typeof KINDS)[number]; label?: string } & LimitOpts,
        cmd: Command,
      ) => {
        const rateLimit = rateLimitOf(opts, cmd);
        const k = await ctx.userClient().call('createApiKeyForCli', {
          orgSlug: opts.org,
          kind: opts.kind,
          ...(opts.label ? { label: opts.label } : {}),
          ...(rateLimit ? { rateLimit } : {}),
        });
        ctx.io.stdout.write(
          wantsJson(cmd)
            ? toJson(k)
            : `${fields([
                ['key', k.key],
                ['key id', k.keyId],
                ['kind', k.kind],
                ['label', k.label],
                ['rate limit', limitText(k.rateLimit)],
              ])}Store the key now; it is not shown again.\n`,
        );
      },
    );

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
                { header: 'rate limit', value: (r) => limitText(r.rateLimit) },
              ],
              `No API keys in ${opts.org}.`,
            ),
      );
    });

  keys
    .command('limit')
    .description("Set an API key's own v1 rate limit, or --clear it back to the plan's (owner or admin)")
    .argument('<keyId>', 'the key id (the middle part of sk_live.<keyId>.<secret>)')
    .requiredOption('--org <slug>', 'organization slug')
    .option('--per-sec <n>', 'requests per second (with --burst)', positive)
    .option('--burst <n>', 'burst (with --per-sec)', positive)
    .option('--clear', "back to the organization's plan's limit")
    .action(async (keyId: string, opts: { org: string; clear?: boolean } & LimitOpts, cmd: Command) => {
      const rateLimit = rateLimitOf(opts, cmd);
      if (Boolean(rateLimit) === Boolean(opts.clear))
        cmd.error('Give either --per-sec and --burst, or --clear.');
      const r = await ctx.userClient().call('updateApiKeyForCli', {
        orgSlug: opts.org,
        keyId,
        rateLimit: rateLimit ?? null,
      });
      ctx.io.stdout.write(
        wantsJson(cmd) ? toJson(r) : `API key ${r.keyId}: rate limit ${limitText(r.rateLimit)}.\n`,
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
