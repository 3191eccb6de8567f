import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import { STEPS, type Step, stepLine, stepOfLine } from '../deploy/build-steps.ts';
import { deployApi, reportEnd, startResilient } from '../deploy/end.ts';
import { followDeployment, isTransient } from '../deploy/follow.ts';
import { forOutput } from '../deploy/log-text.ts';
import { packApp } from '../deploy/pack.ts';
import { progressBar, uploadArtifact } from '../deploy/upload.ts';
import { usageError } from '../errors.ts';
import { toJson, wantsJson } from '../output.ts';

// pier deploy · pier logs · pier restart · pier destroy (pier deployments, rollback, redeploy: releases.ts)

/** --project, else "project" in the folder's pier.json. */
function projectFor(dir: string, given?: string): string {
  if (given) return given;
  try {
    const cfg = JSON.parse(fs.readFileSync(path.join(dir, 'pier.json'), 'utf8')) as { project?: unknown };
    if (typeof cfg.project === 'string' && cfg.project) return cfg.project;
  } catch {
    // no pier.json, or not JSON: the server says what is wrong with it at deploy time
  }
  throw usageError('Which project? Pass --project <slug> (or put "project" in pier.json).');
}

/**
 * The live log of `pier deploy` on stderr: the deployment's lines as they come, and a progress line of its
 * steps — redrawn in place on a terminal, printed once per step otherwise (CI logs).
 */
function liveLog(err: { write(text: string): unknown }, tty: boolean) {
  let current: Step | null = null;
  const redraw = () => {
    if (tty && current) err.write(`\r\x1b[K${stepLine(current)}`);
  };
  const step = (s: Step) => {
    if (current && STEPS.indexOf(s) <= STEPS.indexOf(current)) return;
    current = s;
    if (tty) redraw();
    else err.write(`${stepLine(s)}\n`);
  };
  const print = (text: string) => {
    err.write(tty ? `\r\x1b[K${text}\n` : `${text}\n`);
    redraw();
  };
  return {
    step,
    note: print,
    line: (text: string) => {
      const s = stepOfLine(text);
      if (s) step(s);
      print(`  | ${forOutput(text, tty)}`);
    },
    end: () => {
      if (tty && current) err.write('\n');
    },
  };
}

type LogsOpts = {
  project: string;
  lines: string;
  follow?: boolean;
  build?: boolean;
  runtime?: boolean;
  deployment?: string;
};

export function register(program: Command, ctx: CliContext): void {
  program
    .command('deploy')
    .description('Pack a folder (honouring .gitignore and .pierignore), upload it and follow it to live')
    .argument('[dir]', 'the app folder', '.')
    .option('--project <slug>', 'project slug')
    .action(async (dir: string, opts: { project?: string }, cmd: Command) => {
      const projectSlug = projectFor(dir, opts.project);
      const client = ctx.userClient();
      const err = ctx.io.stderr;
      const tty = Boolean((err as { isTTY?: boolean }).isTTY);
      // Before packing (which reads the whole folder): a wrong slug or token fails in a moment.
      await client.call('getProjectForCli', { slug: projectSlug });
      const packed = await packApp(dir);
      try {
        err.write(`Packed ${packed.files} files (${(packed.bytes / 1024 / 1024).toFixed(1)} MB).\n`);
        const created = await client.call('createDeploymentForCli', { projectSlug });
        let lastPct = -1;
        await uploadArtifact(created, packed.file, (sent, total) => {
          const pct = Math.floor((sent / total) * 100);
          if (tty) err.write(`\rUploading ${progressBar(sent, total)}`);
          else if (pct >= lastPct + 25 || sent === total) err.write(`Uploaded ${pct}%\n`);
          lastPct = pct;
        });
        if (tty) err.write('\n');
        const live = liveLog(err, tty);
        const lost = (e: unknown) =>
          live.note(`  connection lost (${(e as Error).message}); following on when Pier answers`);
        await startResilient(client, created.deploymentId, lost);
        live.step('upload');
        const { deployment, lastLogs } = await followDeployment(
          deployApi(client, projectSlug),
          created.deploymentId,
          {
            onStatus: (s) => {
              // Every deployment starts before it is healthy; its "starting deployment" line can arrive after
              // the status (they are polled separately), and a step is never shown out of order.
              if (s === 'live') {
                live.step('start');
                live.step('healthy');
              }
              live.note(`  ${s}`);
            },
            onLog: (l) => live.line(l.line),
            onReconnect: lost,
          },
        );
        live.end();
        reportEnd(ctx, cmd, deployment, lastLogs, tty);
      } finally {
        fs.rmSync(path.dirname(packed.file), { recursive: true, force: true });
      }
    });

  program
    .command('logs')
    .description("Show the app's output (stdout, stderr and Pier's notes), newest last")
    .requiredOption('--project <slug>', 'project slug')
    .option('-n, --lines <n>', 'how many lines', '100')
    .option('-f, --follow', 'keep printing new lines (reconnects by itself)')
    .option('--build', "builds' output only")
    .option('--runtime', "the running apps' output only")
    .option('--deployment <id>', "one deployment's lines only")
    .action(async (opts: LogsOpts, cmd: Command) => {
      if (opts.build && opts.runtime) throw usageError('Pass --build or --runtime, not both.');
      const client = ctx.userClient();
      const tty = Boolean((ctx.io.stdout as { isTTY?: boolean }).isTTY);
      const filter = {
        projectSlug: opts.project,
        ...(opts.build ? { phase: 'build' as const } : opts.runtime ? { phase: 'runtime' as const } : {}),
        ...(opts.deployment ? { deploymentId: opts.deployment } : {}),
      };
      const limit = Math.min(1000, Math.max(1, Number(opts.lines) || 100));
      let { lines } = await client.call('getAppLogsForCli', { ...filter, limit });
      const print = (ls: typeof lines) => {
        for (const l of ls)
          ctx.io.stdout.write(
            wantsJson(cmd)
              ? `${JSON.stringify(l)}\n`
              : `${l.ts} ${l.phase === 'build' ? 'build ' : ''}${l.stream} ${forOutput(l.line, tty)}\n`,
          );
      };
      print(lines);
      let afterId = lines.at(-1)?.id ?? 0;
      let down = false;
      while (opts.follow) {
        await new Promise((r) => setTimeout(r, 1000));
        try {
          ({ lines } = await client.call('getAppLogsForCli', { ...filter, limit: 1000, afterId }));
        } catch (e) {
          // A restart of Pier or a dropped connection: said once, then it resumes after the last line seen.
          if (!isTransient(e)) throw e;
          if (!down) ctx.io.stderr.write(`connection lost (${(e as Error).message}); reconnecting…\n`);
          down = true;
          continue;
        }
        if (down) ctx.io.stderr.write('reconnected\n');
        down = false;
        print(lines);
        afterId = lines.at(-1)?.id ?? afterId;
      }
    });

  program
    .command('restart')
    .description("Restart a project's app; a crashed deployment is started again and followed to live")
    .requiredOption('--project <slug>', 'project slug')
    .action(async (opts: { project: string }, cmd: Command) => {
      const client = ctx.userClient();
      const r = await client.call('restartAppForCli', { projectSlug: opts.project });
      if (r.status === 'live') {
        ctx.io.stdout.write(wantsJson(cmd) ? toJson(r) : `Restarting ${opts.project}.\n`);
        return;
      }
      const { deployment } = await followDeployment(deployApi(client, opts.project), r.deploymentId, {
        onStatus: (s) => ctx.io.stderr.write(`  ${s}\n`),
      });
      if (wantsJson(cmd)) ctx.io.stdout.write(toJson(deployment));
      else if (deployment.status === 'live') ctx.io.stdout.write(`Live at ${deployment.url}\n`);
      else ctx.io.stderr.write(`Restart failed: ${deployment.errorMessage ?? 'no reason given'}\n`);
      if (deployment.status !== 'live') ctx.exitCode = 1;
    });

  program
    .command('destroy')
    .description("Stop a project's app, drop its database, free its hostname (owner; cannot be undone)")
    .argument('<slug>', 'project slug')
    .requiredOption('--yes', 'confirm: this deletes the database')
    .action(async (slug: string, _opts: unknown, cmd: Command) => {
      const res = await ctx.userClient().call('destroyProjectForCli', { slug });
      ctx.io.stdout.write(wantsJson(cmd) ? toJson(res) : `Destroyed ${res.slug}.\n`);
    });
}
