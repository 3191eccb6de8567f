import { listen, notify } from './core/db/notify.ts';
import type { Deps } from './deps.ts';
import { announceSecretChanges, startHostingRuntime } from './platform/runtime/runtime.ts';

const REVOKED_CHANNEL = 'pier_credential_revoked';

/**
 * Starts what runs beside the HTTP server: the cross-process cache invalidation, the job queue and,
 * with the worker role, the job consumers. Returns a stop function that drains running jobs.
 */
export async function startBackground(
  deps: Deps,
  opts: { worker: boolean; router?: boolean },
): Promise<() => Promise<void>> {
  const unlisten = await listen(deps.db, deps.config.databaseUrl, REVOKED_CHANNEL, (keyId) =>
    deps.credentials.forget(keyId),
  );
  deps.credentials.broadcastRevoke = (keyId) => notify(deps.db, REVOKED_CHANNEL, keyId);
  announceSecretChanges(deps);
  // The hosting runtime (router role) registers the real deploy handler, so it starts before the workers.
  const hosting = opts.router ? await startHostingRuntime(deps) : null;
  await deps.jobs.start();
  if (opts.worker) await deps.jobs.work();
  return async () => {
    await deps.jobs.stop(deps.config.shutdownGraceMs);
    await hosting?.stop();
    await unlisten();
  };
}
