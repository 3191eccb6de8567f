import { and, asc, eq, isNull } from 'drizzle-orm';
import { z } from 'zod';
import { audit } from '../../core/audit/audit.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { findOrgById, MANAGERS, orgForUser, projectForUser, requireRole } from './access.ts';
import { orgsErrors } from './errors.ts';
import { appLimitsSchema } from './plans.ts';
import { APP_LIMITS, type AppLimitsOut, createInput, createProject, toProject } from './projects.ts';
import { projectListItemSchema, projectSchema, slugInput } from './schema.ts';
import { memberships, orgs, projects } from './tables.ts';

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
