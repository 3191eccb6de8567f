import type { Deps } from '../../deps.ts';
import { defineArea } from '../manifest.ts';
import type { Project } from './access.ts';
import { startAccessCache } from './access-cache.ts';
import {
  adminAddMember,
  adminCreateLoginCode,
  adminCreateOrg,
  adminCreatePlatformCredential,
  adminCreateUser,
  adminRevokePlatformCredential,
  adminSetPlan,
} from './admin-fn.ts';
import {
  adminCreateApiKey,
  createApiKeyForCli,
  listApiKeysForCli,
  revokeApiKeyForCli,
  updateApiKeyForCli,
} from './api-keys-fn.ts';
import { orgsCatalogue } from './errors.ts';
import {
  createOrgForCli,
  inviteMemberForCli,
  listMembersForCli,
  removeMemberForCli,
  setMemberRoleForCli,
} from './members-fn.ts';
import { createOrganization, listMyOrgsForCli } from './orgs-fn.ts';
import { promotePendingGrants } from './pending-grants.ts';
import {
  createProjectForCli,
  createProjectInOrg,
  getProjectForCli,
  listMyProjectsForCli,
} from './projects-fn.ts';
import { listSecretsForCli, removeSecretForCli, setSecretForCli } from './secrets-fn.ts';

// Organizations: members and roles, projects, project secrets, v1 API keys, plans, and who may reach what
// (access checks and their cross-process cache). Operator commands that create users and organizations too.

export const orgsArea = defineArea({
  name: 'orgs',
  errors: [orgsCatalogue],
  fns: [
    listMyOrgsForCli,
    getApiUsageByDayForCli,
    createOrganization,
    createOrgForCli,
    listMyProjectsForCli,
    getProjectForCli,
    createProjectForCli,
    createProjectInOrg,
    setSecretForCli,
    removeSecretForCli,
    listSecretsForCli,
    createApiKeyForCli,
    updateApiKeyForCli,
    listApiKeysForCli,
    revokeApiKeyForCli,
    adminCreateApiKey,
    listMembersForCli,
    inviteMemberForCli,
    setMemberRoleForCli,
    removeMemberForCli,
    adminCreateUser,
    adminCreateOrg,
    adminAddMember,
    adminSetPlan,
    adminCreateLoginCode,
    adminCreatePlatformCredential,
    adminRevokePlatformCredential,
  ],
  // The `platform` set also creates identity's account tables: they were made together (docs/areas.md).
  migrations: [
    { area: 'platform', schema: ['src/areas/identity/account-tables.ts', 'src/areas/orgs/tables.ts'] },
  ],
  start: async (deps) => startAccessCache(deps),
  provides: { onEmailVerified: promotePendingGrants },
  // createOrganization and createProjectInOrg are tools for a platform credential with their scope only.
  notTools: [
    'getApiUsageByDayForCli',
    'adminCreateApiKey',
    'adminCreateUser',
    'adminCreateOrg',
    'adminAddMember',
    'adminSetPlan',
    'adminCreateLoginCode',
    'adminCreatePlatformCredential',
    'adminRevokePlatformCredential',
  ],
});

// What orgs asks of an area it cannot import without a cycle; one area provides it (docs/areas.md).
declare module '../../deps.ts' {
  interface Provided {
    /** Called right after a project was created (hosting: database, hostname). */
    provisionProject?: (deps: Deps, project: Project) => Promise<Project>;
  }
}

export {
  findOrgById,
  MANAGERS,
  type Org,
  orgForUser,
  type Project,
  projectForApiKey,
  projectForUser,
  requireRole,
} from './access.ts';

import { getApiUsageByDayForCli } from './usage-fn.ts';

export { issueApiKey } from './api-keys.ts';
export { orgsErrors } from './errors.ts';
export { addMember, createOrg } from './orgs.ts';
export { OrgPlanCache } from './plan-cache.ts';
export { type AppLimits, type BuildLimits, PLANS } from './plans.ts';
export { createProject } from './projects.ts';
export { slugInput } from './schema.ts';
export { onSecretsChanged, projectSecretEnv, validKey } from './secrets.ts';
export { memberships, orgs, type Plan, projects, type Role, secrets } from './tables.ts';
export { usageDaysFn } from './usage-days-fn.ts';
