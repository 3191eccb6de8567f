import type { FunctionName } from '../src/platform/fn.ts';
import { uniq } from './harness.ts';

// A valid body for every function of src/platform/fn.ts, given a tenant the caller owns. Typed by the
// registry, so a new function cannot be added without a sample (the fuzz and guard tests use these).

export type SampleCtx = { orgSlug: string; orgId: string; projectSlug: string; email: string; code: string };

export const validBodies: Record<FunctionName, (c: SampleCtx) => Record<string, unknown>> = {
  exchangeCliAuthCode: (c) => ({ code: c.code }),
  createLoginCodeForCli: () => ({ label: 'laptop' }),
  listMyOrgsForCli: () => ({}),
  listMyProjectsForCli: () => ({}),
  getProjectForCli: (c) => ({ slug: c.projectSlug }),
  createProjectForCli: (c) => ({ orgSlug: c.orgSlug, slug: uniq('p'), name: 'New project' }),
  setSecretForCli: (c) => ({ projectSlug: c.projectSlug, key: 'API_TOKEN', value: 'v' }),
  removeSecretForCli: (c) => ({ projectSlug: c.projectSlug, key: 'API_TOKEN' }),
  listSecretsForCli: (c) => ({ projectSlug: c.projectSlug }),
  whoamiForCli: () => ({}),
  revokeTokenForCli: () => ({}),
  createOrganization: (c) => ({ email: c.email, name: 'Customer Co', slug: uniq('cust') }),
  createProjectInOrg: (c) => ({ orgId: c.orgId, slug: uniq('p'), name: 'Provisioned' }),
  adminCreateUser: (c) => ({ email: c.email }),
  adminCreateOrg: (c) => ({ slug: uniq('adm'), name: 'Admin Org', ownerEmail: c.email }),
  adminAddMember: (c) => ({ orgSlug: c.orgSlug, email: c.email, role: 'member' }),
  adminSetPlan: (c) => ({ orgSlug: c.orgSlug, plan: 'pro' }),
  adminCreateLoginCode: (c) => ({ email: c.email }),
  adminCreatePlatformCredential: () => ({ scopes: ['deploy'] }),
  adminRevokePlatformCredential: () => ({ keyId: 'AAAAAAAAAAAAAAAA' }),
};
