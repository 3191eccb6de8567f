import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { hostingRuntime } from './runtime/runtime.ts';

// How this Pier runs apps, for the dashboard's project page: whether the sandbox is on and what enforces
// the plan's limits (cgroups, or rlimits and Node's heap flag). The node that runs apps decides at start-up;
// an API node without the runtime can only say whether the sandbox is configured.

export const appRuntimeSchema = z.object({
  sandbox: z.boolean(),
  limitsEnforcedBy: z.enum(['cgroups', 'rlimits', 'none', 'unknown']),
  detail: z.string(),
});

export function appRuntimeInfo(deps: Deps): z.infer<typeof appRuntimeSchema> {
  if (!deps.config.appSandbox)
    return {
      sandbox: false,
      limitsEnforcedBy: 'none',
      detail:
        "APP_SANDBOX=off: apps run unsandboxed as Pier's own user, can read DATA_DIR (including the master key), and no limit is enforced.",
    };
  const rt = hostingRuntime(deps);
  if (!rt?.sandbox)
    return {
      sandbox: true,
      limitsEnforcedBy: 'unknown',
      detail: 'The node that runs apps says which limits it enforces in its start-up log.',
    };
  const disk =
    rt.disk?.kind === 'image'
      ? '/data by a disk image of the plan\'s size (writes past it fail with "no space left").'
      : `/data by a usage check (${rt.disk?.why ?? 'no image'}): an app over it is stopped.`;
  return rt.sandbox.kind === 'v1'
    ? {
        sandbox: true,
        limitsEnforcedBy: 'cgroups',
        detail: `Memory, processes and CPU by cgroups (v1); open files and the largest file by rlimits; ${disk}`,
      }
    : {
        sandbox: true,
        limitsEnforcedBy: 'rlimits',
        detail: `No cgroups (${rt.sandbox.why}): memory by Node's heap flag, processes by RLIMIT_NPROC (as root only), open files and file size by rlimits; ${disk}`,
      };
}
