import type { FunctionName } from '../src/http/fn-registry.ts';
import { uniq } from './harness.ts';

// A valid body for every function of src/http/fn-registry.ts, given a tenant the caller owns. Typed by the
// registry, so a new function cannot be added without a sample (the fuzz and guard tests use these).

export type SampleCtx = { orgSlug: string; orgId: string; projectSlug: string; email: string; code: string };

export const validBodies: Record<FunctionName, (c: SampleCtx) => Record<string, unknown>> = {
  exchangeCliAuthCode: (c) => ({ code: c.code }),
  getWebhookSecretForCli: (c) => ({ orgSlug: c.orgSlug }),
  rotateWebhookSecretForCli: (c) => ({ orgSlug: c.orgSlug }),
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
  adminAddMember: (c) => ({ orgSlug: c.orgSlug, email: `${uniq('mem')}@example.com`, role: 'member' }),
  adminSetPlan: (c) => ({ orgSlug: c.orgSlug, plan: 'pro' }),
  adminCreateLoginCode: (c) => ({ email: c.email }),
  adminCreatePlatformCredential: () => ({ scopes: ['deploy'] }),
  adminRevokePlatformCredential: () => ({ keyId: 'AAAAAAAAAAAAAAAA' }),
  createApiKeyForCli: (c) => ({ orgSlug: c.orgSlug, kind: 'test', label: 'fuzz' }),
  listApiKeysForCli: (c) => ({ orgSlug: c.orgSlug }),
  revokeApiKeyForCli: (c) => ({ orgSlug: c.orgSlug, keyId: 'AAAAAAAAAAAAAAAA' }),
  adminCreateApiKey: (c) => ({ orgSlug: c.orgSlug, kind: 'live' }),
  createTokenForCli: () => ({ label: 'laptop' }),
  listTokensForCli: () => ({}),
  updateTokenLabelForCli: () => ({ keyId: 'AAAAAAAAAAAAAAAA', label: 'renamed' }),
  revokeTokenByIdForCli: () => ({ keyId: 'AAAAAAAAAAAAAAAA' }),
  listMembersForCli: (c) => ({ orgSlug: c.orgSlug }),
  inviteMemberForCli: (c) => ({ orgSlug: c.orgSlug, email: `${uniq('inv')}@example.com`, role: 'member' }),
  setMemberRoleForCli: (c) => ({ orgSlug: c.orgSlug, userId: MISSING_ID, role: 'admin' }),
  removeMemberForCli: (c) => ({ orgSlug: c.orgSlug, userId: MISSING_ID }),
  createOrgForCli: () => ({ slug: uniq('org'), name: 'Second org' }),
  adminCreateInviteLink: (c) => ({ email: c.email }),
  adminVerifyUser: (c) => ({ email: c.email }),
  adminListSystemMail: () => ({ limit: 5 }),
  addMailDomainForCli: (c) => ({ orgSlug: c.orgSlug, domain: `${uniq('d')}.example.com` }),
  listMailDomainsForCli: (c) => ({ orgSlug: c.orgSlug }),
  getMailDomainForCli: (c) => ({ orgSlug: c.orgSlug, domain: 'none.example.com' }),
  verifyMailDomainForCli: (c) => ({ orgSlug: c.orgSlug, domain: 'none.example.com' }),
  removeMailDomainForCli: (c) => ({ orgSlug: c.orgSlug, domain: 'none.example.com' }),
  setModelProviderKeyForCli: (c) => ({
    orgSlug: c.orgSlug,
    provider: 'openai',
    apiKey: 'sk-fuzz-0123456789abcdef',
  }),
  removeModelProviderKeyForCli: (c) => ({ orgSlug: c.orgSlug, provider: 'openai' }),
  listModelProvidersForCli: (c) => ({ orgSlug: c.orgSlug }),
  resolveModel: (c) => ({ orgId: c.orgId, model: 'gpt-4o-mini' }),
  getModelUsageForCli: (c) => ({ orgSlug: c.orgSlug }),
  getModelEmbedderForCli: (c) => ({ orgSlug: c.orgSlug }),
  listOutboxForCli: (c) => ({ orgSlug: c.orgSlug }),
  getOutboxMessageForCli: (c) => ({ orgSlug: c.orgSlug, id: MISSING_ID }),
  listMemoryAgentsForCli: (c) => ({ orgSlug: c.orgSlug, environment: 'production' }),
  listMemoryCollectionsForCli: (c) => ({ orgSlug: c.orgSlug, environment: 'sandbox' }),
  listMemoriesForCli: (c) => ({ orgSlug: c.orgSlug, environment: 'production', tier: 'warm', limit: 5 }),
  getMemoryForCli: (c) => ({ orgSlug: c.orgSlug, environment: 'production', memoryId: MISSING_ID }),
  recallMemoriesForCli: (c) => ({ orgSlug: c.orgSlug, environment: 'production', query: 'invoices' }),
  listIntegrationConnectorsForCli: () => ({}),
  listIntegrationConnectionsForCli: (c) => ({
    orgSlug: c.orgSlug,
    environment: 'sandbox',
    status: 'connected',
  }),
  testIntegrationConnectionForCli: (c) => ({ orgSlug: c.orgSlug, connectionId: MISSING_ID }),
  // No connector has an OAuth client in the fuzz app: a clear 400 CONNECTOR_NOT_CONFIGURED.
  connectIntegrationForDashboard: (c) => ({ orgSlug: c.orgSlug, connectorSlug: 'hubspot' }),
  createDeploymentForCli: (c) => ({ projectSlug: c.projectSlug }),
  createDeployment: () => ({ projectId: MISSING_ID }),
  startDeploymentForCli: () => ({ deploymentId: MISSING_ID }),
  startDeployment: () => ({ deploymentId: MISSING_ID }),
  getDeploymentForCli: () => ({ deploymentId: MISSING_ID }),
  getDeployment: () => ({ deploymentId: MISSING_ID }),
  listDeploymentsForCli: (c) => ({ projectSlug: c.projectSlug }),
  getAppLogsForCli: (c) => ({ projectSlug: c.projectSlug }),
  // Destroying the fuzz tenant's project would starve every later sample: aim at one that is not there.
  destroyProjectForCli: () => ({ slug: 'no-such-project' }),
};

const MISSING_ID = '00000000-0000-4000-8000-000000000000';

/** Samples that name something absent on purpose: their valid body answers this instead of 200. */
export const expectedNon200: Partial<Record<FunctionName, number>> = {
  adminRevokePlatformCredential: 404,
  revokeApiKeyForCli: 404,
  updateTokenLabelForCli: 404,
  revokeTokenByIdForCli: 404,
  setMemberRoleForCli: 404,
  removeMemberForCli: 404,
  getOutboxMessageForCli: 404,
  getMailDomainForCli: 404,
  verifyMailDomainForCli: 404,
  removeMailDomainForCli: 404,
  getMemoryForCli: 404,
  testIntegrationConnectionForCli: 404,
  connectIntegrationForDashboard: 400,
  // No provider key in the fuzz tenant and none configured for the platform.
  resolveModel: 404,
  createDeployment: 404,
  startDeploymentForCli: 404,
  startDeployment: 404,
  getDeploymentForCli: 404,
  getDeployment: 404,
  destroyProjectForCli: 404,
};

/** Functions over memory: on a database without pgvector they answer 503 VECTOR_EXTENSION_MISSING, as v1 does. */
export const needsVector: ReadonlySet<FunctionName> = new Set<FunctionName>([
  'listMemoryAgentsForCli',
  'listMemoryCollectionsForCli',
  'listMemoriesForCli',
  'getMemoryForCli',
  'recallMemoriesForCli',
]);
