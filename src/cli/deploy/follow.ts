// Follows a deployment to live or failed, telling the caller each status change.

export type DeploymentView = {
  id: string;
  status: 'uploading' | 'building' | 'starting' | 'live' | 'failed' | 'superseded';
  errorMessage?: string;
  url: string;
};

export type LogLine = { id: number; ts: string; stream: string; line: string };

export type DeployApi = {
  getDeployment(id: string): Promise<DeploymentView>;
  logs(opts: { limit?: number; afterId?: number }): Promise<LogLine[]>;
};

export async function followDeployment(
  api: DeployApi,
  id: string,
  opts: { onStatus?: (s: DeploymentView['status']) => void; timeoutMs?: number; everyMs?: number } = {},
): Promise<{ deployment: DeploymentView; lastLogs: LogLine[] }> {
  const deadline = Date.now() + (opts.timeoutMs ?? 10 * 60_000);
  let last: string | null = null;
  for (;;) {
    const d = await api.getDeployment(id);
    if (d.status !== last) {
      last = d.status;
      opts.onStatus?.(d.status);
    }
    if (d.status === 'live' || d.status === 'superseded') return { deployment: d, lastLogs: [] };
    if (d.status === 'failed')
      return { deployment: d, lastLogs: await api.logs({ limit: 20 }).catch(() => []) };
    if (Date.now() > deadline)
      throw new Error(`Deployment ${id} is still ${d.status}; follow it with 'pier deployments'.`);
    await new Promise((r) => setTimeout(r, opts.everyMs ?? 400));
  }
}
