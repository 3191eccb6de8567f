// areas-layout: sender domains belong to the mail area (src/v1/mail → src/areas/mail)
import {
  addMailDomainForCli,
  getMailDomainForCli,
  listMailDomainsForCli,
  removeMailDomainForCli,
  verifyMailDomainForCli,
} from '../v1/mail/domains-fn.ts';
import {
  adminAddMember,
  adminCreateLoginCode,
  adminCreateOrg,
  adminCreatePlatformCredential,
  adminCreateUser,
  adminRevokePlatformCredential,
  adminSetPlan,
} from './admin.ts';
import { adminCreateApiKey, createApiKeyForCli, listApiKeysForCli, revokeApiKeyForCli } from './api-keys.ts';
import {
  createDeploymentForCli,
  createDeploymentWithScope,
  getAppLogsForCli,
  getDeploymentForCli,
  getDeploymentWithScope,
  listDeploymentsForCli,
  startDeploymentForCli,
  startDeploymentWithScope,
} from './deployments.ts';
import { adminCreateInviteLink, adminVerifyUser } from './invite-links.ts';
import { createLoginCodeForCli, exchangeCliAuthCode } from './login-codes.ts';
import { adminListSystemMail, getOutboxMessageForCli, listOutboxForCli } from './mail-outbox.ts';
import {
  createOrgForCli,
  inviteMemberForCli,
  listMembersForCli,
  removeMemberForCli,
  setMemberRoleForCli,
} from './members.ts';
import {
  getMemoryForCli,
  listMemoriesForCli,
  listMemoryAgentsForCli,
  listMemoryCollectionsForCli,
  recallMemoriesForCli,
} from './memory-dashboard.ts';
import { getModelEmbedderForCli } from './model-embedder-fn.ts';
import { getModelUsageForCli } from './model-usage.ts';
import {
  listModelProvidersForCli,
  removeModelProviderKeyForCli,
  resolveModel,
  setModelProviderKeyForCli,
} from './models.ts';
import { createOrganization, listMyOrgsForCli } from './orgs.ts';
import {
  createTokenForCli,
  listTokensForCli,
  revokeTokenByIdForCli,
  updateTokenLabelForCli,
} from './personal-tokens.ts';
import { destroyProjectForCli } from './project-hosting.ts';
import {
  createProjectForCli,
  createProjectInOrg,
  getProjectForCli,
  listMyProjectsForCli,
} from './projects.ts';
import { listSecretsForCli, removeSecretForCli, setSecretForCli } from './secrets.ts';
import { revokeTokenForCli, whoamiForCli } from './tokens.ts';

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
  adminVerifyUser,
  adminListSystemMail,
  // mail: sender domains
  addMailDomainForCli,
  listMailDomainsForCli,
  getMailDomainForCli,
  verifyMailDomainForCli,
  removeMailDomainForCli,
] as const;

export type Functions = typeof functions;
export type FunctionName = Functions[number]['name'];
