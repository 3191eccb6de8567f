import type { SandboxLimits } from './runtime/sandbox.ts';
import type { Plan } from './tables.ts';

export const PLANS: Record<Plan, { secretsPerProject: number; liveApps: number; app: SandboxLimits }> = {
  free: {
    secretsPerProject: 50,
    liveApps: 1,
    app: { memoryMb: 512, pids: 128, openFiles: 1024, diskMb: 1024, cpuPercent: 50 },
  },
  pro: {
    secretsPerProject: 500,
    liveApps: 100,
    app: { memoryMb: 2048, pids: 512, openFiles: 8192, diskMb: 10_240, cpuPercent: 200 },
  },
};
