import { z } from 'zod';
import type { Plan } from './tables.ts';

/** What each app process of a project may use; the hosting area enforces it (docs/hosting.md "Sandbox"). */
export type AppLimits = {
  memoryMb: number;
  /** Processes and threads together. */
  pids: number;
  openFiles: number;
  /** The largest file the app may write, and the size of its private /tmp (at most 256 MB). */
  diskMb: number;
  /** Share of one core, in percent (100 = one core). */
  cpuPercent: number;
};

/** AppLimits and the plan's name, as getProjectForCli answers them (docs/hosting.md "Sandbox"). */
export const appLimitsSchema = z.object({
  plan: z.string(),
  memoryMb: z.number(),
  pids: z.number(),
  openFiles: z.number(),
  diskMb: z.number(),
  cpuPercent: z.number(),
});

/** A build's own allowance, apart from the app's (docs/hosting.md "Builds"): room for a Next.js build. */
export type BuildLimits = { memoryMb: number; cpuPercent: number; pids: number; timeoutSec: number };

export type PlanLimits = {
  secretsPerProject: number;
  liveApps: number;
  app: AppLimits;
  build: BuildLimits;
  /**
   * The v1 token bucket of the organization's API keys, as a multiple of the configured default
   * (V1_RATE_LIMIT_PER_SEC / _BURST); a key's own limit wins over it (docs/v1-api.md, "Rate limits").
   */
  v1RateLimitFactor: number;
};

export const PLANS: Record<Plan, PlanLimits> = {
  free: {
    secretsPerProject: 50,
    liveApps: 1,
    v1RateLimitFactor: 1,
    app: { memoryMb: 512, pids: 128, openFiles: 1024, diskMb: 1024, cpuPercent: 50 },
    build: { memoryMb: 2048, cpuPercent: 100, pids: 512, timeoutSec: 900 },
  },
  pro: {
    secretsPerProject: 500,
    liveApps: 100,
    v1RateLimitFactor: 5,
    app: { memoryMb: 2048, pids: 512, openFiles: 8192, diskMb: 10_240, cpuPercent: 200 },
    build: { memoryMb: 4096, cpuPercent: 200, pids: 1024, timeoutSec: 1800 },
  },
};
