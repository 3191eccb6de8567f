import { type Command, InvalidArgumentError, Option } from 'commander';
import type { CliContext } from '../context.ts';
import { table, toJson, wantsJson } from '../output.ts';

// pier memory agents | recall — a look at an organization's agent memory with the user's own token (the
// same read-only functions as the dashboard's memory page; a recall here does not count as an access).

const ENVIRONMENTS = ['production', 'sandbox'] as const;
type Env = (typeof ENVIRONMENTS)[number];

const envOption = () =>
  new Option('--env <environment>', 'production (live keys) or sandbox (test keys)')
    .choices(ENVIRONMENTS)
    .default('production');

function number(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError('Not a number.');
  return n;
}

const excerpt = (s: string, max = 80) => {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
};

export function register(program: Command, ctx: CliContext): void {
  const memory = program.command('memory').description("Look at an organization's agent memory");

  memory
    .command('agents')
    .description('List the agents of an environment with their memory counts')
    .requiredOption('--org <slug>', 'organization slug')
    .addOption(envOption())
    .action(async (opts: { org: string; env: Env }, cmd: Command) => {
      const r = await ctx
        .userClient()
        .call('listMemoryAgentsForCli', { orgSlug: opts.org, environment: opts.env });
      ctx.io.stdout.write(
        wantsJson(cmd)
          ? toJson(r)
          : table(
              r.items,
              [
                { header: 'id', value: (a) => a.id },
                { header: 'name', value: (a) => a.name },
                { header: 'memories', value: (a) => String(a.memoryCount) },
              ],
              `No agents in ${opts.org} (${opts.env}).`,
            ),
      );
    });

  memory
    .command('recall')
    .description(
      'Recall memories (meaning and keywords fused by default), best first, without counting it as an access',
    )
    .argument('<query>', 'what to recall')
    .requiredOption('--org <slug>', 'organization slug')
    .addOption(envOption())
    .option('--agent <id>', "only this agent's memories")
    .option('--limit <n>', 'at most this many (1–100, default 10)', number)
    .option('--threshold <t>', 'minimum similarity (0–1)', number)
    .addOption(
      new Option('--mode <mode>', 'hybrid (vector + keyword), vector or keyword')
        .choices(['hybrid', 'vector', 'keyword'])
        .default('hybrid'),
    )
    .action(
      async (
        query: string,
        opts: { org: string; env: Env; agent?: string; limit?: number; threshold?: number; mode: string },
        cmd: Command,
      ) => {
        const r = await ctx.userClient().call('recallMemoriesForCli', {
          orgSlug: opts.org,
          environment: opts.env,
          query,
          ...(opts.agent ? { agentId: opts.agent } : {}),
          ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
          ...(opts.threshold !== undefined ? { threshold: opts.threshold } : {}),
          mode: opts.mode as 'hybrid' | 'vector' | 'keyword',
        });
        ctx.io.stdout.write(
          wantsJson(cmd)
            ? toJson(r)
            : table(
                r.memories,
                [
                  { header: 'similarity', value: (m) => m.similarity.toFixed(3) },
                  { header: 'id', value: (m) => m.id },
                  { header: 'content', value: (m) => excerpt(m.content) },
                ],
                'Nothing recalled.',
              ),
        );
      },
    );
}
