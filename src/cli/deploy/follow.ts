// Follows a deployment to its end, telling the caller each status change and, when asked, each new log line of
// this deployment (polled with a cursor, so a line is told once). A dropped connection, a reset, a timeout or a
// server that is restarting is not the deployment's failure: the poll waits and resumes from the last line it
// saw, so `pier deploy` ends with the deployment's own final state (decision 097).

export type DeploymentView = {
  id: string;
  status: 'uploading' | 'building' | 'starting' | 'live' | 'crashed' | 'failed' | 'superseded';
  errorMessage?: string;
  url: string;
};

export type LogLine = {
  id: number;
  ts: string;
  stream: string;
  line: string;
  deploymentId?: string | null;
  phase?: 'build' | 'runtime' | null;
};

export type DeployApi = {
  getDeployment(id: string): Promise<DeploymentView>;
  /** The project's log lines; with deploymentId, that deployment's only. */
  logs(opts: { limit?: number; afterId?: number; deploymentId?: string }): Promise<LogLine[]>;
};

/** Errors that say nothing about the deployment: no answer, a reset, a timeout, an overloaded or restarting server. */
export function isTransient(err: unknown): boolean {
  const e = err as { code?: unknown; status?: unknown } | null;
  if (e?.code === 'NETWORK_ERROR' || e?.code === 'TIMEOUT') return true;
  return typeof e?.status === 'number' && (e.status === 429 || e.status >= 500);
}

/** Calls fn until it answers; transient failures wait (backing off to 5 s) and try again until the deadline. */
export async function resilient<T>(
  fn: () => Promise<T>,
  o: { deadline: number; onRetry?: (err: unknown) => void; sleep?: (ms: number) => Promise<void> },
): Promise<T> {
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!isTransient(err) || Date.now() > o.deadline) throw err;
      o.onRetry?.(err);
      await sleep(Math.min(5000, 250 * 2 ** attempt));
    }
  }
}

export async function followDeployment(
  api: DeployApi,
  id: string,
  opts: {
    onStatus?: (s: DeploymentView['status']) => void;
    /** Each new log line of this deployment, oldest first (the build's output, Pier's notes). */
    onLog?: (l: LogLine) => void;
    /** Told once per lost connection; the follow goes on. */
    onReconnect?: (err: unknown) => void;
    timeoutMs?: number;
    everyMs?: number;
  } = {},
): Promise<{ deployment: DeploymentView; lastLogs: LogLine[] }> {
  const deadline = Date.now() + (opts.timeoutMs ?? 15 * 60_000);
  let last: string | null = null;
  let afterId = 0;
  let reconnecting = false;
  const call = <T>(fn: () => Promise<T>) =>
    resilient(fn, {
      deadline,
      onRetry: (err) => {
        if (!reconnecting) opts.onReconnect?.(err);
        reconnecting = true;
      },
    }).then((v) => {
      reconnecting = false;
      return v;
    });
  const pollLogs = async () => {
    if (!opts.onLog) return;
    for (;;) {
      const lines = await call(() => api.logs({ limit: 1000, afterId, deploymentId: id }));
      for (const l of lines) {
        afterId = Math.max(afterId, l.id);
        if (!l.deploymentId || l.deploymentId === id) opts.onLog(l);
      }
      if (lines.length < 1000) return;
    }
  };
  for (;;) {
    const d = await call(() => api.getDeployment(id));
    // Lines first, then the status: the step a line announces comes before the status that ends it.
    await pollLogs();
    if (d.status !== last) {
      last = d.status;
      opts.onStatus?.(d.status);
    }
    if (d.status === 'live' || d.status === 'superseded') return { deployment: d, lastLogs: [] };
    if (d.status === 'failed' || d.status === 'crashed') {
      // This deployment's own lines (its build and start), never the live version's request log.
      const own = await call(() => api.logs({ limit: 40, deploymentId: id })).catch(() => []);
      return { deployment: d, lastLogs: own.filter((l) => l.deploymentId === id) };
    }
    if (Date.now() > deadline)
      throw new Error(`Deployment ${id} is still ${d.status}; follow it with 'pier deployments'.`);
    await new Promise((r) => setTimeout(r, opts.everyMs ?? 400));
  }
}
