import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import { table, toJson, wantsJson } from '../output.ts';

// pier domains add | list | verify | rm — an organization's sender domains. Live API keys send mail only
// from verified domains; `add` prints the DNS records to publish, `verify` looks them up now.

type Domain = {
  domain: string;
  status: string;
  records: { kind: string; type: string; name: string; value: string; required: boolean; state: string }[];
};

function describe(d: Domain): string {
  const lines = [`${d.domain}: ${d.status}`, ''];
  for (const r of d.records) {
    lines.push(`${r.kind} (${r.required ? 'required' : 'advised'}, ${r.state})`);
    lines.push(`  ${r.type} ${r.name}`);
    lines.push(`  ${r.value}`);
  }
  return `${lines.join('\n')}\n`;
}

export function register(program: Command, ctx: CliContext): void {
  const domains = program.command('domains').description("Manage an organization's sender domains for mail");

  domains
    .command('add')
    .description('Add a sender domain (owner or admin) and print the DNS records to publish')
    .argument('<domain>', 'the domain mail is sent from, e.g. example.com')
    .requiredOption('--org <slug>', 'organization slug')
    .action(async (domain: string, opts: { org: string }, cmd: Command) => {
      const d = await ctx.userClient().call('addMailDomainForCli', { orgSlug: opts.org, domain });
      ctx.io.stdout.write(
        wantsJson(cmd)
          ? toJson(d)
          : `${describe(d)}\nPublish these records, then run: pier domains verify ${d.domain} --org ${opts.org}\n`,
      );
    });

  domains
    .command('list')
    .alias('ls')
    .description("List the organization's sender domains and their status")
    .requiredOption('--org <slug>', 'organization slug')
    .action(async (opts: { org: string }, cmd: Command) => {
      const rows = await ctx.userClient().call('listMailDomainsForCli', { orgSlug: opts.org });
      ctx.io.stdout.write(
        wantsJson(cmd)
          ? toJson(rows)
          : table(
              rows,
              [
                { header: 'domain', value: (r) => r.domain },
                { header: 'status', value: (r) => r.status },
                {
                  header: 'records',
                  value: (r) => r.records.map((x) => `${x.kind}:${x.state}`).join(' '),
                },
                { header: 'last checked', value: (r) => r.lastCheckedAt ?? '-' },
              ],
              `No sender domains in ${opts.org}.`,
            ),
      );
    });

  domains
    .command('verify')
    .description('Look the DNS records up now (owner or admin) and show each one’s state')
    .argument('<domain>', 'the domain')
    .requiredOption('--org <slug>', 'organization slug')
    .action(async (domain: string, opts: { org: string }, cmd: Command) => {
      const d = await ctx.userClient().call('verifyMailDomainForCli', { orgSlug: opts.org, domain });
      ctx.io.stdout.write(wantsJson(cmd) ? toJson(d) : describe(d));
      // Scripts wait with `until pier domains verify …; do sleep 60; done`: not verified yet is a failure.
      if (d.status !== 'verified') ctx.exitCode = 1;
    });

  domains
    .command('rm')
    .alias('remove')
    .description('Remove a sender domain and its key (owner or admin)')
    .argument('<domain>', 'the domain')
    .requiredOption('--org <slug>', 'organization slug')
    .action(async (domain: string, opts: { org: string }, cmd: Command) => {
      const r = await ctx.userClient().call('removeMailDomainForCli', { orgSlug: opts.org, domain });
      ctx.io.stdout.write(wantsJson(cmd) ? toJson(r) : `Removed ${r.domain}.\n`);
    });
}
