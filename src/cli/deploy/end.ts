import type { Command } from 'commander';
import type { PierClient } from '../../sdk/client.ts';
import type { CliContext } from '../context.ts';
import { toJson, wantsJson } from '../output.ts';
import { type DeployApi, type DeploymentView, isTransient, type LogLine, resilient } from './follow.ts';
import { failureLines } from './log-text.ts';

// The start and the end of following a deployment, shared by deploy, restart, rollback and redeploy: a start
// that survives a dropped connection, and the exit code that is the deployment's final state.

export function deployApi(client: PierClient, projectSlug: string): DeployApi {
  return {
    getDeployment: (id) => client.call('getDeploymentForCli', { deploymentId: id }),
    logs: async (o) => (await client.call('getAppLogsForCli', { projectSlug, ...o })).lines,
  };
}

/**
 * startDeploymentForCli through a dropped connection: the answer may be lost after the server started it, so a
 * retry first asks whether it is still waiting to start.
 */
export async function startResilient(
  client: PierClient,
  deploymentId: string,
  onReconnect: (err: unknown) => void,
): Promise<void> {
  const deadline = Date.now() + 5 * 60_000;
  for (;;) {
    try {
      await client.call('startDeploymentForCli', { deploymentId });
      return;
    } catch (err) {
      if (!isTransient(err) || Date.now() > deadline) throw err;
      onReconnect(err);
      await new Promise((r) => setTimeout(r, 500));
      const d = await resilient(() => client.call('getDeploymentForCli', { deploymentId }), { deadline });
      if (d.status !== 'uploading') return;
    }
  }
}

/** Prints how it ended and sets the exit code: 0 when it went live, 1 when it failed or crashed. */
export function reportEnd(
  ctx: CliContext,
  cmd: Command,
  deployment: DeploymentView,
  lastLogs: LogLine[],
  tty: boolean,
): void {
  const ok = deployment.status === 'live' || deployment.status === 'superseded';
  if (wantsJson(cmd)) ctx.io.stdout.write(toJson({ ...deployment, logs: lastLogs }));
  else if (!ok) {
    const err = ctx.io.stderr;
    err.write(`Deployment ${deployment.status}: ${deployment.errorMessage ?? 'no reason given'}\n`);
    if (lastLogs.length)
      err.write(`Last log lines:\n${failureLines(lastLogs, tty, deployment.errorMessage).join('\n')}\n`);
  } else ctx.io.stdout.write(`Live at ${deployment.url}\n`);
  if (!ok) ctx.exitCode = 1;
}
