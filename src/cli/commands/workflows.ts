import { type Command, Option } from 'commander';
import type { CliContext } from '../context.ts';
import { CliError, usageError } from '../errors.ts';
import { toJson, wantsJson } from '../output.ts';

// pier workflows run <slug> --var k=v: starts a run of a project's workflow with the user's own token and
// follows it step by step until it ends (exit code 1 when the run failed or was cancelled).

const POLL_MS = 500;
const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/** `k=v`, repeatable; a value that parses as JSON is taken as JSON (`n=3`, `tags=["a"]`), else as text. */
function collectVar(raw: string, acc: Record<string, unknown>): Record<string, unknown> {
  const i = raw.indexOf('=');
  if (i <= 0) throw usageError(`--var takes name=value, got '${raw}'.`);
  const value = raw.slice(i + 1);
  let parsed: unknown = value;
  try {
    parsed = JSON.parse(value);
  } catch {}
  return { ...acc, [raw.slice(0, i)]: parsed };
}

type StepState = { status: string; attempts: number; lastError: string | null; creditsUsed: number };

export function register(program: Command, ctx: CliContext): void {
  const workflows = program.command('workflows').description("Run a project's workflows");

  workflows
    .command('run')
    .description('Start a run of a workflow and follow it step by step')
    .argument('<slug>', 'workflow slug')
    .requiredOption('--org <slug>', 'organization slug')
    .requiredOption('--project <slug>', 'project slug')
    .addOption(
      new Option('--env <environment>', 'production (live keys) or sandbox (test keys)')
        .choices(['production', 'sandbox'])
        .default('production'),
    )
    .option('--var <name=value>', 'a variable (repeat for more)', collectVar, {})
    .option('--no-follow', 'print the run id and return at once')
    .action(
      async (
        slug: string,
        opts: {
          org: string;
          project: string;
          env: 'production' | 'sandbox';
          var: Record<string, unknown>;
          follow: boolean;
        },
        cmd: Command,
      ) => {
        const client = ctx.userClient();
        let run = await client.call('runWorkflowForCli', {
          orgSlug: opts.org,
          projectSlug: opts.project,
          workflowSlug: slug,
          environment: opts.env,
          variables: opts.var,
        });
        const out = ctx.io.stdout;
        if (!wantsJson(cmd)) out.write(`run ${run.id} started (${run.totalSteps} steps)\n`);
        const seen = new Map<string, string>();
        const report = (states: Record<string, StepState>) => {
          for (const [id, s] of Object.entries(states)) {
            const key = `${s.status}/${s.attempts}`;
            if (seen.get(id) === key || s.status === 'pending') continue;
            seen.set(id, key);
            if (wantsJson(cmd)) continue;
            const extra =
              s.status === 'completed'
                ? ` (${s.creditsUsed} credits)`
                : s.lastError
                  ? ` — ${s.lastError}`
                  : s.attempts > 1
                    ? ` (attempt ${s.attempts})`
                    : '';
            out.write(`  ${id}: ${s.status}${extra}\n`);
          }
        };
        while (opts.follow && ['pending', 'running'].includes(run.status)) {
          report(run.stepStates);
          await sleep(POLL_MS);
          run = await client.call('getWorkflowRunForCli', {
            orgSlug: opts.org,
            environment: opts.env,
            runId: run.id,
          });
        }
        report(run.stepStates);
        if (wantsJson(cmd)) out.write(toJson(run));
        else if (opts.follow) {
          out.write(
            `run ${run.status} in ${run.totalDurationMs ?? 0} ms, ${run.creditsUsed} credits\n${toJson(run.output)}`,
          );
        }
        if (run.status === 'failed' || run.status === 'cancelled')
          throw new CliError('WORKFLOW_RUN_FAILED', run.error ?? `The run was ${run.status}.`);
      },
    );
}
