import { and, asc, eq, isNull } from 'drizzle-orm';
import { z } from 'zod';
import { audit } from '../../core/audit/audit.ts';
import { isUniqueViolation } from '../../core/db/pg-errors.ts';
import type { Deps } from '../../deps.ts';
import { defineFn } from '../../http/fn-kit.ts';
import {
  findOrgById,
  MANAGERS,
  type Org,
  orgForUser,
  type Project,
  projectForUser,
  requireRole,
} from './access.ts';
import { orgsErrors } from './errors.ts';
import { appLimitsSchema, PLANS } from './plans.ts';
import { projectListItemSchema, projectSchema, slugInput } from './schema.ts';
import { assertSlug } from './slugs.ts';
import { memberships, orgs, type Plan, projects } from './tables.ts';

type AppLimitsOut = z.infer<typeof appLimitsSchema>;

/** Each plan's app limits as getProjectForCli answers them, built once rather than spread per call. */
const APP_LIMITS = Object.fromEntries(
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

const createInput = {
  slug: slugInput,
  name: z.string().trim().min(1).max(200),
  region: z.string().max(32).optional(),
};

export const listMyProjectsForCli = defineFn({
  name: 'listMyProjectsForCli',
  summary:
    "Every non-destroyed project across the caller's organizations, by organization then project slug.",
  auth: { kind: 'user' },
  input: z.strictObject({}),
  output: z.array(projectListItemSchema),
  errors: [],
  handler: async ({ deps, caller }) => {
    return deps.db.orm
      .select({ slug: projects.slug, name: projects.name, orgSlug: orgs.slug })
      .from(projects)
      .innerJoin(orgs, eq(orgs.id, projects.orgId))
      .innerJoin(
        memberships,
        and(eq(memberships.orgId, projects.orgId), eq(memberships.userId, caller.userId)),
      )
      .where(isNull(projects.destroyedAt))
      .orderBy(asc(orgs.slug), asc(projects.slug));
  },
});

export const getProjectForCli = defineFn({
  name: 'getProjectForCli',
  summary: 'One project of an organization the caller belongs to.',
  auth: { kind: 'user' },
  input: z.strictObject({ slug: slugInput }),
  output: projectSchema.extend({ appLimits: appLimitsSchema }),
  errors: ['PROJECT_NOT_FOUND'],
  handler: async ({ deps, caller }, { slug }) => {
    const { project, org } = await projectForUser(deps, caller.userId, slug);
    const out = toProject(project) as z.infer<typeof projectSchema> & { appLimits: AppLimitsOut };
    out.appLimits = APP_LIMITS[org.plan];
    return out;
  },
});

export const createProjectForCli = defineFn({
  name: 'createProjectForCli',
  minRole: 'manager',
  summary: 'Creates a project in one of your organizations (owner or admin).',
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput, ...createInput }),
  output: projectSchema,
  errors: ['ORG_NOT_FOUND', 'INVALID_SLUG', 'SLUG_TAKEN', 'INVALID_REGION'],
  handler: async ({ deps, caller }, input) => {
    const { org, role } = await orgForUser(deps, caller.userId, input.orgSlug);
    requireRole(role, MANAGERS);
    const p = await createProject(deps, org, input);
    await audit(deps, { kind: 'user', id: caller.userId }, 'project.create', org.id, { slug: p.slug });
    return toProject(p);
  },
});

export const createProjectInOrg = defineFn({
  name: 'createProjectInOrg',
  summary:
    'Creates a project in an existing organization. Scope project.create; gives no access to its data.',
  auth: { kind: 'platform', scope: 'project.create' },
  input: z.strictObject({ orgId: z.string().max(100), ...createInput }),
  output: projectSchema,
  errors: ['ORG_NOT_FOUND', 'INVALID_SLUG', 'SLUG_TAKEN', 'INVALID_REGION'],
  handler: async ({ deps, caller }, input) => {
    const org = await findOrgById(deps, input.orgId);
    if (!org) throw orgsErrors.orgNotFound();
    const p = await createProject(deps, org, input);
    await audit(deps, { kind: 'platform', id: caller.keyId }, 'project.create', org.id, { slug: p.slug });
    return toProject(p);
  },
});
