import type { Plan } from './tables.ts';

export const PLANS: Record<Plan, { secretsPerProject: number; liveApps: number }> = {
  free: { secretsPerProject: 50, liveApps: 1 },
  pro: { secretsPerProject: 500, liveApps: 100 },
};
