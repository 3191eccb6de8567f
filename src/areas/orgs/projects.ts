import { z } from 'zod';
import { isUniqueViolation } from '../../core/db/pg-errors.ts';
import type { Deps } from '../../deps.ts';
import type { Org, Project } from './access.ts';
import { orgsErrors } from './errors.ts';
import { type appLimitsSchema, PLANS } from './plans.ts';
import { type projectSchema, slugInput } from './schema.ts';
import { assertSlug } from './slugs.ts';
import { type Plan, projects } from './tables.ts';

export type AppLimitsOut = z.infer<typeof appLimitsSchema>;

/** Each plan's app limits as getProjectForCli answers them, built once rather than spread per call. */
export const APP_LIMITS = Object.fromEntries(
  Object.entries(PLANS).map(([plan, p]) => [plan, { plan, ...p.app }]),
) as Record<Plan, AppLimitsOut>;

/** The contract's Project: no secrets, scaling or git; errorMessage only when status is error. */
export function toProject(p: Project): z.infer<typeof projectSchema> {
  const out: z.infer<typeof projectSchema> = {
    id: p.id,
    slug: p.slug,
    orgId: p.orgId,
    region: p.region,
    status: p.status,
  };
  if (p.status === 'error' && p.errorMessage) out.errorMessage = p.errorMessage;
  return out;
}

export async function createProject(
  deps: Deps,
  org: Org,
  input: { slug: string; name: string; region?: string },
): Promise<Project> {
  assertSlug(input.slug);
  const region = input.region ?? deps.config.regions[0]!;
  if (!deps.config.regions.includes(region)) throw orgsErrors.invalidRegion(region, deps.config.regions);
  try {
    const [p] = await deps.db.orm
      .insert(projects)
      .values({
        orgId: org.id,
        slug: input.slug,
        name: input.name,
        region,
        status: 'provisioning',
        createdAt: deps.clock.now(),
      })
      .returning();
    // Its database, hostname and machine slot; ends `ready` (nothing deployed yet) or `error` with why.
    const provision = deps.provided.provisionProject;
    return provision ? await provision(deps, p!) : p!;
  } catch (err) {
    if (isUniqueViolation(err)) throw orgsErrors.slugTaken(input.slug);
    throw err;
  }
}

export const createInput = {
  slug: slugInput,
  name: z.string().trim().min(1).max(200),
  region: z.string().max(32).optional(),
};
