import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import { fields, table, toJson, wantsJson } from '../output.ts';

// pier projects · pier projects create · pier project <slug>

type Project = {
  id: string;
  slug: string;
  orgId: string;
  region: string;
  status: string;
  errorMessage?: string;
};

const projectFields = (p: Project) =>
  fields([
    ['slug', p.slug],
    ['id', p.id],
    ['org id', p.orgId],
    ['region', p.region],
    ['status', p.status],
    ...(p.errorMessage ? ([['error', p.errorMessage]] as [string, string][]) : []),
  ]);

export function register(program: Command, ctx: CliContext): void {
  const list = async (_opts: unknown, cmd: Command) => {
    const projects = await ctx.userClient().call('listMyProjectsForCli');
    ctx.io.stdout.write(
      wantsJson(cmd)
        ? toJson(projects)
        : table(
            projects,
            [
              { header: 'org', value: (p) => p.orgSlug },
              { header: 'slug', value: (p) => p.slug },
              { header: 'name', value: (p) => p.name },
            ],
            "No projects yet; create one with 'pier projects create'.",
          ),
    );
  };

  const projects = program
    .command('projects')
    .description('List the projects of all your organizations (or: projects create)')
    .action(list);
  projects.command('list').description('List the projects of all your organizations').action(list);
  projects
    .command('create')
    .description('Create a project in one of your organizations (owner or admin)')
    .requiredOption('--org <slug>', 'organization slug')
    .requiredOption('--slug <slug>', 'project slug: 3–40 of a-z, 0-9 and -')
    .requiredOption('--name <name>', 'display name')
    .option('--region <region>', "hosting region (default: the server's first)")
    .action(async (opts: { org: string; slug: string; name: string; region?: string }, cmd: Command) => {
      const p = await ctx.userClient().call('createProjectForCli', {
        orgSlug: opts.org,
        slug: opts.slug,
        name: opts.name,
        ...(opts.region ? { region: opts.region } : {}),
      });
      ctx.io.stdout.write(
        wantsJson(cmd) ? toJson(p) : `Created project ${p.slug} in ${opts.org}.\n${projectFields(p)}`,
      );
    });

  program
    .command('project')
    .description('Show one project')
    .argument('<slug>', 'project slug')
    .action(async (slug: string, _opts: unknown, cmd: Command) => {
      const p = await ctx.userClient().call('getProjectForCli', { slug });
      const l = p.appLimits;
      ctx.io.stdout.write(
        wantsJson(cmd)
          ? toJson(p)
          : projectFields(p) +
              fields([
                [
                  'app limits',
                  `${l.plan} plan: memory ${l.memoryMb} MB, ${l.pids} processes/threads, CPU ${l.cpuPercent / 100} core, ` +
                    `${l.openFiles} open files, ${l.diskMb} MB disk (/data, and the largest file)`,
                ],
              ]),
      );
    });
}
