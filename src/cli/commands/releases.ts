import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import { deployApi, reportEnd } from '../deploy/end.ts';
import { followDeployment } from '../deploy/follow.ts';
import { table, toJson, wantsJson } from '../output.ts';

// pier deployments · pier rollback · pier redeploy: a project's releases and going back to one of them.

const secs = (ms: number | null) => (ms === null ? '' : `${(ms / 1000).toFixed(1)} s`);

export function register(program: Command, ctx: CliContext): void {
  program
    .command('deployments')
    .description(
      "List a project's deployments, newest first: status, detected kind, build time, who deployed",
    )
    .requiredOption('--project <slug>', 'project slug')
    .action(async (opts: { project: string }, cmd: Command) => {
      const rows = await ctx.userClient().call('listDeploymentsForCli', { projectSlug: opts.project });
      ctx.io.stdout.write(
        wantsJson(cmd)
          ? toJson(rows)
          : table(
              rows,
              [
                { header: 'id', value: (d) => d.id },
                { header: 'status', value: (d) => d.status },
                { header: 'kind', value: (d) => d.kind },
                { header: 'build', value: (d) => secs(d.buildMs) },
                {
                  header: 'origin',
                  value: (d) => (d.sourceId ? `${d.origin} of ${d.sourceId.slice(0, 8)}` : d.origin),
                },
                { header: 'by', value: (d) => d.deployedBy },
                { header: 'created at', value: (d) => d.createdAt },
                { header: 'error', value: (d) => d.errorMessage },
              ],
              `No deployments of ${opts.project} yet; run 'pier deploy --project ${opts.project}'.`,
            ),
      );
    });

  for (const [name, fn, what] of [
    [
      'rollback',
      'rollbackDeploymentForCli',
      "Go back to an earlier deployment's kept build at once, no build (default: the one live before)",
    ],
    [
      'redeploy',
      'redeployDeploymentForCli',
      "Build an earlier deployment's stored artifact again and deploy it (default: the live one)",
    ],
  ] as const)
    program
      .command(name)
      .description(what)
      .argument('[deployment]', 'deployment id (see pier deployments)')
      .requiredOption('--project <slug>', 'project slug')
      .action(async (id: string | undefined, opts: { project: string }, cmd: Command) => {
        const client = ctx.userClient();
        const err = ctx.io.stderr;
        const tty = Boolean((err as { isTTY?: boolean }).isTTY);
        const d = await client.call(fn, { projectSlug: opts.project, ...(id ? { deploymentId: id } : {}) });
        err.write(
          name === 'rollback'
            ? `Rolling back to ${d.sourceId}: its kept build, no build step (deployment ${d.id}).\n`
            : `Rebuilding the stored artifact of ${d.sourceId} from source (deployment ${d.id}).\n`,
        );
        const { deployment, lastLogs } = await followDeployment(deployApi(client, opts.project), d.id, {
          onStatus: (s) => err.write(`  ${s}\n`),
          onReconnect: (e) => err.write(`  connection lost (${(e as Error).message}); following on\n`),
        });
        reportEnd(ctx, cmd, deployment, lastLogs, tty);
      });
}
