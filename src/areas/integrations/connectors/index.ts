import { catalogue } from '../catalogue/index.ts';
import type { ProviderCategory, ProviderEntry } from '../catalogue/schema.ts';
import { airtable } from './airtable.ts';
import { attio } from './attio.ts';
import { box } from './box.ts';
import { capsule } from './capsule.ts';
import { close } from './close.ts';
import { coda } from './coda.ts';
import { dropbox } from './dropbox.ts';
import { freshsales } from './freshsales.ts';
import { genericAccount, genericErrorMessage } from './generic.ts';
import { googleDrive } from './google-drive.ts';
import { hubspot } from './hubspot.ts';
import { microsoftTeams } from './microsoft-teams.ts';
import { notion } from './notion.ts';
import { onedrive } from './onedrive.ts';
import { pipedrive } from './pipedrive.ts';
import { salesforce } from './salesforce.ts';
import { slack } from './slack.ts';
import { smartsheet } from './smartsheet.ts';
import type { Category, Connector, ConnectorCode } from './types.ts';
import { webex } from './webex.ts';
import { zendeskSell } from './zendesk-sell.ts';
import { zohoCrm } from './zoho-crm.ts';

// Every connector: each catalogue entry, joined by slug to its code module where it has one (the unified
// mappers and quirks data cannot say). An entry without code is usable through auth + passthrough.

const code: Record<string, ConnectorCode> = {
  hubspot,
  salesforce,
  pipedrive,
  'google-drive': googleDrive,
  dropbox,
  slack,
  notion,
  airtable,
  'zoho-crm': zohoCrm,
  close,
  attio,
  onedrive,
  box,
  'microsoft-teams': microsoftTeams,
  smartsheet,
  coda,
  'zendesk-sell': zendeskSell,
  freshsales,
  capsule,
  webex,
};

const UNIFIED_FEATURES: Record<Category, string[]> = {
  crm: ['contacts', 'companies', 'deals'],
  storage: ['files', 'folders', 'upload', 'download'],
  communication: ['channels', 'messages', 'users'],
  productivity: ['documents', 'tables', 'rows'],
};

export function buildConnector(e: ProviderEntry, more: ConnectorCode = {}): Connector {
  const unified = (['crm', 'storage', 'communication', 'productivity'] as const).filter((c) => more[c]);
  const a = e.auth;
  return {
    ...more,
    slug: e.slug,
    name: e.name,
    category: unified[0] ?? e.categories[0]!,
    categories: [...new Set([...unified, ...e.categories])],
    description: e.description,
    features: [...(more.features ?? unified.flatMap((c) => UNIFIED_FEATURES[c])), 'passthrough'],
    authType: a.kind,
    entry: e,
    oauth:
      a.kind === 'oauth2'
        ? {
            authUrl: a.authorizeUrl,
            tokenUrl: a.tokenUrl,
            revokeUrl: a.revokeUrl,
            scopes: a.scopes,
            scopeSeparator: a.scopeSeparator,
            scopeParam: a.scopeParam,
            pkce: a.pkce,
            clientAuth: a.clientAuth,
            tokenBody: a.tokenBody,
            extraAuthParams: a.authParams,
          }
        : undefined,
    placement: a.kind === 'oauth2' ? a.tokenPlacement : a.kind === 'api_key' ? a.placement : { in: 'basic' },
    apiUrl: e.baseUrl,
    contentUrl: e.contentUrl,
    pagination: e.pagination.style,
    apiHeaders: Object.keys(e.headers).length ? e.headers : undefined,
    account: more.account ?? genericAccount(e),
    errorMessage: more.errorMessage ?? genericErrorMessage,
    unified,
  };
}

export const connectors: Connector[] = catalogue.map((e) => buildConnector(e, code[e.slug]));

const bySlug = new Map(connectors.map((c) => [c.slug, c]));

export function connectorBySlug(slug: string): Connector | undefined {
  return bySlug.get(slug);
}

/** The connectors in a category (any of their categories), or all. */
export function connectorsIn(category?: ProviderCategory): Connector[] {
  return category ? connectors.filter((c) => c.categories.includes(category)) : connectors;
}
