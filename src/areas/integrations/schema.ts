import { z } from 'zod';
import { dataPageSchema } from '../../core/pagination.ts';
import { CATEGORIES } from './catalogue/schema.ts';

// The zod contract of every integrations operation (rest-api-v1.md, "Integrations"), one schema each.
// `connectionId` goes in the query string, and for POST/PATCH also in the body (the contract shows both).

const id = z.string().min(1).max(300);
const nullableString = z.string().nullable();
const raw = z.record(z.string(), z.unknown());

export const category = z.enum(CATEGORIES);

export const connector = z.object({
  slug: z.string(),
  name: z.string(),
  /** The primary category; `categories` lists every one (a filter by category matches any of them). */
  category,
  categories: z.array(category),
  description: z.string(),
  features: z.array(z.string()),
  authType: z.enum(['oauth2', 'api_key', 'basic']),
  /** Whether end users can connect: OAuth needs the operator's client (INTEGRATIONS_<SLUG>_CLIENT_ID/_SECRET). */
  configured: z.boolean(),
  pagination: z.string(),
  logo: z.string(),
  docsUrl: z.string(),
  supports: z.object({
    /** The unified categories with mappers (/v1/integrations/<category>/…). */
    unified: z.array(z.string()),
    passthrough: z.boolean(),
    syncs: z.boolean(),
    webhooks: z.boolean(),
  }),
  /** What a connection must say in `connectionConfig` (a subdomain, a region). */
  variables: z.array(
    z.object({ name: z.string(), label: z.string(), example: z.string().nullable(), required: z.boolean() }),
  ),
  /** What `credentials` takes for API-key and Basic providers (empty for OAuth). */
  credentials: z.array(z.object({ name: z.enum(['apiKey', 'username', 'password']), label: z.string() })),
});
export const connectorList = z.object({ data: z.array(connector) });
export const connectorsQuery = z.object({ category: category.optional() });
export const slugParams = z.object({ slug: z.string().min(1).max(100) });

export const connectionStatus = z.enum(['connected', 'error', 'expired']);
export const connection = z.object({
  id: z.string(),
  connectorSlug: z.string(),
  status: connectionStatus,
  /** Why the connection is not connected (the provider's reason, made safe); null when connected. */
  statusReason: nullableString,
  externalAccountId: nullableString,
  externalAccountName: nullableString,
  endUserId: z.string(),
  createdAt: z.string(),
  lastUsedAt: nullableString,
});
export const connectionList = z.object({ data: z.array(connection) });
export const connectionsQuery = z.object({
  connectorId: z.string().max(100).optional(),
  status: connectionStatus.optional(),
});
export const createConnectionBody = z.object({
  connectorSlug: z.string().min(1).max(100),
  endUserId: z.string().min(1).max(300),
  redirectUrl: z
    .url({ protocol: /^https?$/ })
    .max(2000)
    .optional(),
  /** The connection's variables (see the connector's `variables`). */
  connectionConfig: z.record(z.string().max(50), z.string().max(253)).optional(),
  /** API-key and Basic providers: the end user's key, or user name and password. */
  credentials: z
    .strictObject({
      apiKey: z.string().min(1).max(4000).optional(),
      username: z.string().min(1).max(500).optional(),
      password: z.string().max(4000).optional(),
    })
    .optional(),
});
export const createConnectionResult = z.object({
  connectionId: z.string(),
  /** Where to send the end user's browser (OAuth); null when the credentials connected it at once. */
  authorizationUrl: z.string().nullable(),
  status: connectionStatus,
});
export const testResult = z.object({ success: z.boolean(), error: z.string().optional() });
export const success = z.object({ success: z.literal(true) });
export const idParams = z.object({ id });

export const callbackQuery = z.object({
  state: z.string().max(500).optional(),
  code: z.string().max(4000).optional(),
  error: z.string().max(500).optional(),
  error_description: z.string().max(2000).optional(),
});

// ---- unified operations
const withConnection = { connectionId: id };
const optionalConnection = { connectionId: id.optional() };
export const listQuery = z.object({
  ...withConnection,
  cursor: z.string().max(4096).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});
export const connectionQuery = z.object(optionalConnection);
export const filesQuery = listQuery.extend({ folderId: id.optional() });
export const foldersQuery = listQuery.extend({ parentId: id.optional() });
export const messagesQuery = listQuery.extend({ channelId: id });

const contactFields = {
  firstName: z.string().max(500).optional(),
  lastName: z.string().max(500).optional(),
  email: z.email().max(500).optional(),
  phone: z.string().max(100).optional(),
  title: z.string().max(500).optional(),
};
export const contactBody = z.object({ ...optionalConnection, ...contactFields });
export const companyBody = z.object({
  ...optionalConnection,
  name: z.string().min(1).max(500),
  domain: z.string().max(500).optional(),
  industry: z.string().max(500).optional(),
});
export const dealBody = z.object({
  ...optionalConnection,
  name: z.string().min(1).max(500),
  amount: z.number().finite().optional(),
  stage: z.string().max(500).optional(),
});
export const uploadBody = z.object({
  connectionId: id,
  name: z.string().min(1).max(500),
  mimeType: z.string().min(1).max(200),
  data: z.base64().max(40 * 1024 * 1024),
  folderId: id.optional(),
});
export const folderBody = z.object({
  connectionId: id,
  name: z.string().min(1).max(500),
  parentId: id.optional(),
});
export const messageBody = z.object({
  connectionId: id,
  channelId: id,
  content: z.string().min(1).max(40_000),
});
export const documentBody = z.object({
  connectionId: id,
  title: z.string().min(1).max(2000),
  content: z.string().max(200_000).optional(),
  parentId: id.optional(),
});
export const rowBody = z.object({ connectionId: id, fields: z.record(z.string(), z.unknown()) });
export const tableParams = z.object({ tableId: id });

export const contact = z.object({
  id: z.string(),
  firstName: nullableString,
  lastName: nullableString,
  email: nullableString,
  phone: nullableString,
  title: nullableString,
  companyId: nullableString,
  createdAt: nullableString,
  updatedAt: nullableString,
  rawData: raw,
});
const stamps = { createdAt: nullableString, updatedAt: nullableString, rawData: raw };
export const company = z.object({
  id: z.string(),
  name: nullableString,
  domain: nullableString,
  industry: nullableString,
  ...stamps,
});
export const deal = z.object({
  id: z.string(),
  name: nullableString,
  amount: z.number().nullable(),
  stage: nullableString,
  ...stamps,
});
export const file = z.object({
  id: z.string(),
  name: z.string(),
  mimeType: nullableString,
  size: z.number().nullable(),
  folderId: nullableString,
  ...stamps,
});
export const folder = z.object({
  id: z.string(),
  name: z.string(),
  parentId: nullableString,
  createdAt: nullableString,
  rawData: raw,
});
export const download = z.object({ data: z.string(), mimeType: z.string(), filename: z.string() });
export const channel = z.object({
  id: z.string(),
  name: z.string(),
  isPrivate: z.boolean(),
  memberCount: z.number().nullable(),
  rawData: raw,
});
export const message = z.object({
  id: z.string(),
  channelId: z.string(),
  userId: nullableString,
  content: z.string(),
  createdAt: nullableString,
  rawData: raw,
});
export const user = z.object({
  id: z.string(),
  name: nullableString,
  email: nullableString,
  isBot: z.boolean(),
  rawData: raw,
});
export const document = z.object({ id: z.string(), title: nullableString, url: nullableString, ...stamps });
export const table = z.object({
  id: z.string(),
  name: nullableString,
  createdAt: nullableString,
  rawData: raw,
});
export const row = z.object({
  id: z.string(),
  tableId: z.string(),
  fields: z.record(z.string(), z.unknown()),
  createdAt: nullableString,
  rawData: raw,
});
export const page = dataPageSchema;

export const passthroughBody = z.object({
  connectionId: id,
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']),
  path: z.string().min(1).max(2000),
  query: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  body: z.unknown().optional(),
  headers: z.record(z.string(), z.string()).optional(),
});
export const passthroughResult = z.object({
  status: z.number().int(),
  headers: z.record(z.string(), z.string()),
  data: z.unknown(),
});

export const webhookSettingsBody = z.object({
  url: z.url({ protocol: /^https?$/ }).max(2000),
  /** A new signing secret (the old one stops at once). */
  rotateSecret: z.boolean().optional(),
});
export const webhookSettings = z.object({
  url: z.string(),
  /** Standard Webhooks secret (`whsec_…`) the deliveries are signed with. */
  secret: z.string(),
  updatedAt: z.string(),
});
