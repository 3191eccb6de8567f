// Follows a deployment to live or failed, telling the caller each status change and, when asked, each new
// log line of this deployment (polled with a cursor, so a line is told once).

export type DeploymentView = {
  id: string;
  status: 'uploading' | 'building' | 'starting' | 'live' | 'crashed' | 'failed' | 'superseded';
  errorMessage?: string;
  url: string;
};

export type LogLine = { id: number; ts: string; stream: string; line: string; deploymentId?: string | null };

export type DeployApi = {
  getDeployment(id: string): Promise<DeploymentView>;
  logs(opts: { limit?: number; afterId?: number }): Promise<LogLine[]>;
};

export async function followDeployment(
  api: DeployApi,
  id: string,
  opts: {
    onStatus?: (s: DeploymentView['status']) => void;
    /** Each new log line of this deployment, oldest first (the build's output, Pier's notes). */
    onLog?: (l: LogLine) => void;
    timeoutMs?: number;
    everyMs?: number;
  } = {},
): Promise<{ deployment: DeploymentView; lastLogs: LogLine[] }> {
  const deadline = Date.now() + (opts.timeoutMs ?? 10 * 60_000);
  let last: string | null = null;
  let afterId = 0;
  const pollLogs = async () => {
    if (!opts.onLog) return;
    const lines = await api.logs({ limit: 1000, afterId }).catch(() => []);
    for (const l of lines) {
      afterId = Math.max(afterId, l.id);
      if (l.deploymentId === id) opts.onLog(l);
    }
  };
  for (;;) {
    const d = await api.getDeployment(id);
    // Lines first, then the status: the step a line announces comes before the status that ends it.
    await pollLogs();
    if (d.status !== last) {
      last = d.status;
      opts.onStatus?.(d.status);
    }
    if (d.status === 'live' || d.status === 'superseded') return { deployment: d, lastLogs: [] };
    if (d.status === 'failed' || d.status === 'crashed')
      return { deployment: d, lastLogs: await api.logs({ limit: 20 }).catch(() => []) };
    if (Date.now() > deadline)
      throw new Error(`Deployment ${id} is still ${d.status}; follow it with 'pier deployments'.`);
    await new Promise((r) => setTimeout(r, opts.everyMs ?? 400));
  }
}
