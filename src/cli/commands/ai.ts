import { type Command, InvalidArgumentError } from 'commander';
import type { CliContext } from '../context.ts';
import { fields, table, toJson, wantsJson } from '../output.ts';

// pier ai usage | limits | budget | allow — what the organization's API keys spent through the model proxy,
// and the monthly budgets and model allow-lists that limit it (docs/models.md, "Spend, budgets and
// allow-lists").

const usd = (n: number | null) =>
  n === null ? 'no price' : `$${n < 1 && n > 0 ? n.toFixed(4) : n.toFixed(2)}`;

function budgetArg(value: string): number | null {
  if (value === 'none') return null;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0)
    throw new InvalidArgumentError('A budget is USD, 0 or more, or "none".');
  return n;
}

function daysArg(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 366) throw new InvalidArgumentError('Days: 1 to 366.');
  return n;
}

export function register(program: Command, ctx: CliContext): void {
  const ai = program.command('ai').description("The model proxy's spend, budgets and allow-lists");

  ai.command('usage')
    .description('Model usage and cost per day, API key and model (any member)')
    .requiredOption('--org <slug>', 'organization slug')
    .option('--days <n>', 'how many days back, today included', daysArg, 30)
    .action(async (opts: { org: string; days: number }, cmd: Command) => {
      const u = await ctx.userClient().call('getModelUsageForCli', { orgSlug: opts.org, days: opts.days });
      ctx.io.stdout.write(
        wantsJson(cmd)
          ? toJson(u)
          : table(
              u.rows,
              [
                { header: 'day', value: (r) => r.day },
                { header: 'key id', value: (r) => r.keyId || '-' },
                { header: 'model', value: (r) => r.model },
                { header: 'requests', value: (r) => String(r.requests) },
                { header: 'tokens', value: (r) => String(r.totalTokens) },
                { header: 'cost', value: (r) => usd(r.costUsd) },
              ],
              `No model usage in ${opts.org} in ${opts.days} days.`,
            ) + (u.rows.length ? `Total: ${usd(u.totals.costUsd)}, ${u.totals.requests} requests.\n` : ''),
      );
    });

  ai.command('limits')
    .description("This month's spend, the budgets and each key's allowed models (any member)")
    .requiredOption('--org <slug>', 'organization slug')
    .action(async (opts: { org: string }, cmd: Command) => {
      const l = await ctx.userClient().call('getModelLimitsForCli', { orgSlug: opts.org });
      const budget = (b: number | null) => (b === null ? 'none' : usd(b));
      ctx.io.stdout.write(
        wantsJson(cmd)
          ? toJson(l)
          : `${fields([
              ['period', `month from ${l.periodStart} (UTC)`],
              [
                'organization',
                `${usd(l.organization.spentUsd)} of ${budget(l.organization.monthlyBudgetUsd)}`,
              ],
            ])}${table(
              l.keys,
              [
                { header: 'key id', value: (k) => k.keyId },
                { header: 'label', value: (k) => k.label },
                { header: 'spent', value: (k) => usd(k.spentUsd) },
                { header: 'budget', value: (k) => budget(k.monthlyBudgetUsd) },
                { header: 'models', value: (k) => k.allowedModels?.join(', ') ?? 'any' },
              ],
              'No API keys.',
            )}`,
      );
    });

  ai.command('budget')
    .description(
      'Set the monthly budget in USD of the organization, or of one key with --key; "none" removes it',
    )
    .argument('<usd>', 'USD per calendar month (UTC), 0 blocks every call, or "none"', budgetArg)
    .requiredOption('--org <slug>', 'organization slug')
    .option('--key <keyId>', 'an API key id (default: the whole organization)')
    .action(async (monthlyUsd: number | null, opts: { org: string; key?: string }, cmd: Command) => {
      const r = await ctx.userClient().call('setModelBudgetForCli', {
        orgSlug: opts.org,
        ...(opts.key ? { keyId: opts.key } : {}),
        monthlyUsd,
      });
      const who = r.keyId ? `API key ${r.keyId}` : opts.org;
      ctx.io.stdout.write(
        wantsJson(cmd)
          ? toJson(r)
          : `${who}: monthly budget ${r.monthlyBudgetUsd === null ? 'none' : usd(r.monthlyBudgetUsd)}, ${usd(r.spentUsd)} spent this month.\n`,
      );
    });

  ai.command('allow')
    .description('Limit an API key to these models (names or globs with *), or --any')
    .argument('<keyId>', 'the key id (the middle part of sk_live.<keyId>.<secret>)')
    .argument('[models...]', "model names or globs, e.g. gpt-4o-mini 'anthropic/*'")
    .requiredOption('--org <slug>', 'organization slug')
    .option('--any', 'allow every model again')
    .action(async (keyId: string, models: string[], opts: { org: string; any?: boolean }, cmd: Command) => {
      if (models.length > 0 === Boolean(opts.any)) cmd.error('Give the models, or --any.');
      const r = await ctx
        .userClient()
        .call('setModelAllowListForCli', { orgSlug: opts.org, keyId, models: opts.any ? null : models });
      ctx.io.stdout.write(
        wantsJson(cmd)
          ? toJson(r)
          : `API key ${r.keyId}: ${r.allowedModels ? r.allowedModels.join(', ') : 'any model'}.\n`,
      );
    });
}
