// A connector is a catalogue entry (data: catalogue/*.json) plus, for some, code: the unified mappers and
// the provider's quirks that data cannot say (Slack's `ok: false`, Salesforce's instance URL). It knows
// nothing of Pier's tables or HTTP;
// it talks to the provider only through the `ProviderCall` it is handed (provider-client.ts), which injects
// the connection's token, goes through the SSRF guard, refreshes on 401 and maps errors.

import type { Readable } from 'node:stream';
import type { Placement, ProviderCategory, ProviderEntry, UnifiedCategory } from '../catalogue/schema.ts';

/** A unified category: the operations under /v1/integrations/<category>/. */
export type Category = UnifiedCategory;
export type { ProviderCategory };

export type TokenSet = {
  accessToken: string;
  refreshToken?: string;
  /** When the access token stops working; unknown → treated as long-lived. */
  expiresAt?: Date;
  /** `expires_in` of a token answer; the service turns it into expiresAt on its clock. */
  expiresInSec?: number;
  /** What the provider said about the account along with the token (Slack's team, Notion's workspace). */
  extra?: Record<string, unknown>;
};

export type OAuthSpec = {
  authUrl: string;
  tokenUrl: string;
  /**
   * RFC 7009 revocation endpoint (`token=` form POST), on the token host: with TOKEN_URL overridden it moves
   * to the same path on the overriding origin.
   */
  revokeUrl?: string;
  scopes: string[];
  scopeSeparator: ' ' | ',';
  /** The query parameter carrying the scopes (Slack: `scope` for bot scopes). */
  scopeParam?: string;
  /** PKCE (S256) where the provider supports it. */
  pkce: boolean;
  /** How the client authenticates at the token endpoint: form fields, or HTTP Basic. */
  clientAuth: 'body' | 'basic';
  /** Token endpoint body encoding (Notion takes JSON). */
  tokenBody: 'form' | 'json';
  extraAuthParams?: Record<string, string>;
};

export type Account = { id: string; name: string | null; meta?: Record<string, unknown> };

export type ProviderRequest = {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Relative to the API base (or the content base), starting with `/`. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  /** JSON body; or `raw` for another content type. */
  json?: unknown;
  raw?: { data: Buffer | string; contentType: string };
  headers?: Record<string, string>;
  host?: 'api' | 'content';
  /** A 2xx answer's body is left unread in `stream` (file downloads streamed through Pier). */
  stream?: boolean;
};

export type ProviderResponse = {
  status: number;
  headers: Headers;
  body: Buffer;
  /** With `stream` on the request and a 2xx answer: the body, unread. */
  stream?: Readable;
  json<T = unknown>(): T;
};

/** Calls the provider on behalf of one connection. Throws Pier errors for provider failures. */
export type ProviderCall = (req: ProviderRequest) => Promise<ProviderResponse>;

/** A failure the provider reported in its own way (status + message), for provider-client.ts to map. */
export type ProviderFailure = { status: number; message: string; authExpired?: boolean };

export type Page<T> = { items: T[]; next: string | null };
export type ListArgs = { cursor?: string; limit: number };

type Raw = { rawData: Record<string, unknown> };
export type Contact = {
  id: string;
  firstName: string | null;
  lastName: string | null;
  email: string | null;
  phone: string | null;
  title: string | null;
  companyId: string | null;
  createdAt: string | null;
  updatedAt: string | null;
} & Raw;
export type ContactInput = {
  firstName?: string;
  lastName?: string;
  email?: string;
  phone?: string;
  title?: string;
};
export type Company = {
  id: string;
  name: string | null;
  domain: string | null;
  industry: string | null;
  createdAt: string | null;
  updatedAt: string | null;
} & Raw;
export type Deal = {
  id: string;
  name: string | null;
  amount: number | null;
  stage: string | null;
  createdAt: string | null;
  updatedAt: string | null;
} & Raw;
export type FileItem = {
  id: string;
  name: string;
  mimeType: string | null;
  size: number | null;
  folderId: string | null;
  createdAt: string | null;
  updatedAt: string | null;
} & Raw;
export type Folder = { id: string; name: string; parentId: string | null; createdAt: string | null } & Raw;
export type Channel = { id: string; name: string; isPrivate: boolean; memberCount: number | null } & Raw;
export type Message = {
  id: string;
  channelId: string;
  userId: string | null;
  content: string;
  createdAt: string | null;
} & Raw;
export type WorkspaceUser = {
  id: string;
  name: string | null;
  email: string | null;
  isBot: boolean;
} & Raw;
export type Document = {
  id: string;
  title: string | null;
  url: string | null;
  createdAt: string | null;
  updatedAt: string | null;
} & Raw;
export type Table = { id: string; name: string | null; createdAt: string | null } & Raw;
export type Row = {
  id: string;
  tableId: string;
  fields: Record<string, unknown>;
  createdAt: string | null;
} & Raw;

export type CrmOps = {
  listContacts(call: ProviderCall, a: ListArgs): Promise<Page<Contact>>;
  createContact(call: ProviderCall, input: ContactInput): Promise<Contact>;
  getContact(call: ProviderCall, id: string): Promise<Contact>;
  updateContact(call: ProviderCall, id: string, input: ContactInput): Promise<Contact>;
  deleteContact(call: ProviderCall, id: string): Promise<void>;
  listCompanies(call: ProviderCall, a: ListArgs): Promise<Page<Company>>;
  createCompany(
    call: ProviderCall,
    input: { name: string; domain?: string; industry?: string },
  ): Promise<Company>;
  listDeals(call: ProviderCall, a: ListArgs): Promise<Page<Deal>>;
  createDeal(call: ProviderCall, input: { name: string; amount?: number; stage?: string }): Promise<Deal>;
};

export type StorageOps = {
  listFiles(call: ProviderCall, a: ListArgs & { folderId?: string }): Promise<Page<FileItem>>;
  uploadFile(
    call: ProviderCall,
    input: { name: string; mimeType: string; data: Buffer; folderId?: string },
  ): Promise<FileItem>;
  downloadFile(call: ProviderCall, id: string): Promise<{ data: Buffer; mimeType: string; filename: string }>;
  /** The same bytes as a stream, never held whole (the signed download URL); without it, downloadFile. */
  openFile?(call: ProviderCall, id: string): Promise<FileStream>;
  deleteFile(call: ProviderCall, id: string): Promise<void>;
  listFolders(call: ProviderCall, a: ListArgs & { parentId?: string }): Promise<Page<Folder>>;
  createFolder(call: ProviderCall, input: { name: string; parentId?: string }): Promise<Folder>;
};

export type FileStream = { stream: Readable; mimeType: string; filename: string; size: number | null };

export type CommunicationOps = {
  listChannels(call: ProviderCall, a: ListArgs): Promise<Page<Channel>>;
  listMessages(call: ProviderCall, a: ListArgs & { channelId: string }): Promise<Page<Message>>;
  postMessage(call: ProviderCall, input: { channelId: string; content: string }): Promise<Message>;
  listUsers(call: ProviderCall, a: ListArgs): Promise<Page<WorkspaceUser>>;
};

export type ProductivityOps = {
  listDocuments(call: ProviderCall, a: ListArgs): Promise<Page<Document>>;
  createDocument(
    call: ProviderCall,
    input: { title: string; content?: string; parentId?: string },
  ): Promise<Document>;
  listTables(call: ProviderCall, a: ListArgs): Promise<Page<Table>>;
  listRows(call: ProviderCall, a: ListArgs & { tableId: string }): Promise<Page<Row>>;
  createRow(call: ProviderCall, input: { tableId: string; fields: Record<string, unknown> }): Promise<Row>;
};

export type Connector = {
  slug: string;
  name: string;
  /** The primary category (the first unified one it offers, else its first); `categories` lists them all. */
  category: ProviderCategory;
  categories: ProviderCategory[];
  description: string;
  features: string[];
  authType: ProviderEntry['auth']['kind'];
  /** The catalogue entry as validated (auth details, variables, pagination, rate-limit headers). */
  entry: ProviderEntry;
  /** The OAuth endpoints and quirks; absent for API-key and Basic providers. */
  oauth?: OAuthSpec;
  /** Where the access token or API key goes on each API call. */
  placement: Placement | { in: 'basic' };
  /** The API base; may hold the connection's `{variables}`. */
  apiUrl: string;
  /** A second API host (Dropbox's content host). */
  contentUrl?: string;
  /**
   * The API base of one connection, from what its token answer said (Salesforce's `instance_url`,
   * Pipedrive's `api_domain`); used unless the operator set INTEGRATIONS_<SLUG>_API_URL.
   */
  apiUrlFrom?(meta: Record<string, unknown>): string | null;
  /** How the provider pages (every unified list answers `{ data, nextCursor }` anyway). */
  pagination: string;
  /** Headers every API call carries (Notion-Version). */
  apiHeaders?: Record<string, string>;
  /** Token endpoint answer → tokens; throws a ProviderFailure-shaped error itself when it is one. */
  parseToken?(json: Record<string, unknown>): TokenSet;
  /** Who the connection acts as, from the provider (called after connecting and by /test). */
  account(call: ProviderCall, tokens: TokenSet): Promise<Account>;
  /** Failures some providers report with HTTP 200 (Slack's `ok: false`), and their error bodies' message. */
  failure?(res: ProviderResponse): ProviderFailure | null;
  errorMessage(res: ProviderResponse): string | null;
  /** Revokes the grant at the provider, where it can; errors are ignored by the caller. */
  revoke?(
    call: ProviderCall,
    tokens: TokenSet,
    client: { clientId: string; clientSecret: string },
  ): Promise<void>;
  /** The unified categories it has mappers for. */
  unified: Category[];
  crm?: CrmOps;
  storage?: StorageOps;
  communication?: CommunicationOps;
  productivity?: ProductivityOps;
};

/** What a provider's code module adds to its catalogue entry (connectors/<slug>.ts). */
export type ConnectorCode = Partial<Pick<Connector, 'account' | 'errorMessage' | 'features'>> &
  Pick<
    Connector,
    'apiUrlFrom' | 'parseToken' | 'failure' | 'revoke' | 'crm' | 'storage' | 'communication' | 'productivity'
  >;

/** Reads a JSON error body's message at one of the given paths (`error.message`, `message`). */
export function messageAt(res: ProviderResponse, ...paths: string[]): string | null {
  let json: unknown;
  try {
    json = res.json();
  } catch {
    return null;
  }
  for (const p of paths) {
    let v: unknown = json;
    for (const k of p.split('.'))
      v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
    if (typeof v === 'string' && v) return v;
  }
  return null;
}

export const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
export const iso = (v: unknown): string | null => {
  if (typeof v === 'number') return new Date(v * 1000).toISOString();
  if (typeof v !== 'string' || !v) return null;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
};
