import type { Pool } from 'undici';
import type { AppProcess } from './local-driver.ts';
import type { AppManifest } from './tables.ts';

// What the supervisor runs for one app, and the two things done to one process apart from any slot: following
// the hand-off shim's messages, and retiring it once its requests are finished (docs/decisions/020).

export type NodeInstance = {
  kind: 'node';
  deploymentId: string;
  proc: AppProcess;
  /** Pooled keep-alive connections to the app for the proxy path (undici; its Unix socket when sandboxed). */
  upstream: Pool;
  inflight: number;
  startedAt: number;
  retiring: boolean;
  /** Connection hand-off to this process (docs/decisions/020); null when it runs on the proxy path only. */
  handoff: HandoffState | null;
};
export type HandoffState = {
  /** The shim found the app's server: the router may hand connections over. */
  ready: boolean;
  /** Connections handed over so far. */
  handed: number;
  /** After a drain request: every handed connection has closed (or the process is gone). */
  drained: boolean;
};
export type StaticInstance = { kind: 'static'; deploymentId: string; root: string; spa: boolean };
export type Instance = NodeInstance | StaticInstance;

export type AppSpec = {
  projectId: string;
  slug: string;
  deploymentId: string;
  dir: string;
  manifest: AppManifest;
};

/** Lets in-flight requests finish (bounded), then stops the old process. */
export async function retireInstance(inst: Instance, drainMs: number): Promise<void> {
  if (inst.kind !== 'node') return;
  inst.retiring = true;
  const deadline = Date.now() + drainMs;
  const h = inst.handoff;
  // Handed-over connections: the app closes each after its next response and reports when none is left.
  if (h && h.handed > 0 && drainMs > 0 && inst.proc.child.connected) {
    h.drained = false;
    inst.proc.child.send({ pier: 'drain' }, () => {});
  }
  while ((inst.inflight > 0 || (h && !h.drained)) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 20));
  await inst.proc.stop();
  void inst.upstream.destroy().catch(() => {});
}

/** Follows the shim's messages of a process started for connection hand-off. */
export function watchHandoff(proc: AppProcess): HandoffState {
  const h: HandoffState = { ready: false, handed: 0, drained: true };
  proc.child.on('message', (m: { pier?: string } | null) => {
    if (m?.pier === 'ready') h.ready = true;
    else if (m?.pier === 'drained') h.drained = true;
  });
  void proc.exited.then(() => {
    h.ready = false;
    h.drained = true;
  });
  return h;
}
