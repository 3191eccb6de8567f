import {
  createDeploymentForCli,
  createDeploymentWithScope,
  getAppLogsForCli,
  getDeploymentForCli,
  getDeploymentWithScope,
  listDeploymentsForCli,
  startDeploymentForCli,
  startDeploymentWithScope,
} from '../areas/hosting/deployments.ts';
import { destroyProjectForCli } from '../areas/hosting/project-hosting.ts';
import { adminCreateInviteLink } from '../areas/identity/invite-links.ts';
import { createLoginCodeForCli, exchangeCliAuthCode } from '../areas/identity/login-codes.ts';
import {
  createTokenForCli,
  listTokensForCli,
  revokeTokenByIdForCli,
  updateTokenLabelForCli,
} from '../areas/identity/personal-tokens.ts';
import { revokeTokenForCli, whoamiForCli } from '../areas/identity/tokens.ts';
import { getOutboxMessageForCli, listOutboxForCli } from '../areas/mail/outbox-fn.ts';
import {
  getMemoryForCli,
  listMemoriesForCli,
  listMemoryAgentsForCli,
  listMemoryCollectionsForCli,
  recallMemoriesForCli,
} from '../areas/memory/dashboard-fn.ts';
import { getModelEmbedderForCli } from '../areas/models/model-embedder-fn.ts';
import { getModelUsageForCli } from '../areas/models/model-usage.ts';
import {
  listModelProvidersForCli,
  removeModelProviderKeyForCli,
  resolveModel,
  setModelProviderKeyForCli,
} from '../areas/models/models.ts';
import {
  adminAddMember,
  adminCreateLoginCode,
  adminCreateOrg,
  adminCreatePlatformCredential,
  adminCreateUser,
  adminRevokePlatformCredential,
  adminSetPlan,
} from '../areas/orgs/admin.ts';
import {
  adminCreateApiKey,
  createApiKeyForCli,
  listApiKeysForCli,
  revokeApiKeyForCli,
} from '../areas/orgs/api-keys.ts';
import {
  createOrgForCli,
  inviteMemberForCli,
  listMembersForCli,
  removeMemberForCli,
  setMemberRoleForCli,
} from '../areas/orgs/members.ts';
import { createOrganization, listMyOrgsForCli } from '../areas/orgs/orgs.ts';
import {
  createProjectForCli,
  createProjectInOrg,
  getProjectForCli,
  listMyProjectsForCli,
} from '../areas/orgs/projects.ts';
import { listSecretsForCli, removeSecretForCli, setSecretForCli } from '../areas/orgs/secrets.ts';

// The registry of every function served at POST /api/fn/<name>.
export const functions = [
  exchangeCliAuthCode,
  createLoginCodeForCli,
  listMyOrgsForCli,
  listMyProjectsForCli,
  getProjectForCli,
  createProjectForCli,
  setSecretForCli,
  removeSecretForCli,
  listSecretsForCli,
  whoamiForCli,
  revokeTokenForCli,
  createOrganization,
  createProjectInOrg,
  destroyProjectForCli,
  createDeploymentForCli,
  startDeploymentForCli,
  getDeploymentForCli,
  listDeploymentsForCli,
  getAppLogsForCli,
  createDeploymentWithScope,
  startDeploymentWithScope,
  getDeploymentWithScope,
  adminCreateUser,
  adminCreateOrg,
  adminAddMember,
  adminSetPlan,
  adminCreateLoginCode,
  adminCreatePlatformCredential,
  adminRevokePlatformCredential,
  createApiKeyForCli,
  listApiKeysForCli,
  revokeApiKeyForCli,
  adminCreateApiKey,
  setModelProviderKeyForCli,
  removeModelProviderKeyForCli,
  listModelProvidersForCli,
  resolveModel,
  getModelUsageForCli,
  getModelEmbedderForCli,
  listOutboxForCli,
  getOutboxMessageForCli,
  // dashboard: memory (read-only, any member)
  listMemoryAgentsForCli,
  listMemoryCollectionsForCli,
  listMemoriesForCli,
  getMemoryForCli,
  recallMemoriesForCli,
  // dashboard: personal tokens, members, organizations, invite links
  createTokenForCli,
  listTokensForCli,
  updateTokenLabelForCli,
  revokeTokenByIdForCli,
  listMembersForCli,
  inviteMemberForCli,
  setMemberRoleForCli,
  removeMemberForCli,
  createOrgForCli,
  adminCreateInviteLink,
] as const;

export type Functions = typeof functions;
export type FunctionName = Functions[number]['name'];
