import { INTEGRATION_CONNECTORS } from '../../../config.ts';
import { airtable } from './airtable.ts';
import { dropbox } from './dropbox.ts';
import { googleDrive } from './google-drive.ts';
import { hubspot } from './hubspot.ts';
import { notion } from './notion.ts';
import { pipedrive } from './pipedrive.ts';
import { salesforce } from './salesforce.ts';
import { slack } from './slack.ts';
import type { Category, Connector } from './types.ts';

// Every connector, as data. The slugs are those the configuration knows (INTEGRATION_CONNECTORS).
export const connectors: Connector[] = [
  hubspot,
  salesforce,
  pipedrive,
  googleDrive,
  dropbox,
  slack,
  notion,
  airtable,
];

const bySlug = new Map(connectors.map((c) => [c.slug, c]));

export function connectorBySlug(slug: string): Connector | undefined {
  return bySlug.get(slug);
}

export function connectorsIn(category?: Category): Connector[] {
  return category ? connectors.filter((c) => c.category === category) : connectors;
}

export const KNOWN_SLUGS: readonly string[] = INTEGRATION_CONNECTORS;
