import { z } from 'zod';

// The operator's settings per integration provider, INTEGRATIONS_<SLUG>_<SETTING> (slug upper-cased, `-` as
// `_`), read once with the rest of the config. The catalogue has dozens of providers, so the variables are
// found by their shape rather than listed; the integrations area looks its providers up by that prefix.
// Kept beside config.ts so that file stays within its size; only config.ts calls it.

export type IntegrationClientConfig = {
  clientId?: string;
  clientSecret?: string;
  authUrl?: string;
  tokenUrl?: string;
  apiUrl?: string;
  /** A second API host (Dropbox's content host); defaults to apiUrl when only that is set. */
  contentUrl?: string;
  /** Verifies the provider's webhooks (Slack's signing secret, Notion's verification token…). */
  webhookSecret?: string;
};

const SETTINGS = {
  CLIENT_ID: 'clientId',
  CLIENT_SECRET: 'clientSecret',
  AUTH_URL: 'authUrl',
  TOKEN_URL: 'tokenUrl',
  API_URL: 'apiUrl',
  CONTENT_URL: 'contentUrl',
  WEBHOOK_SECRET: 'webhookSecret',
} as const;
const NAME =
  /^INTEGRATIONS_([A-Z0-9_]+?)_(CLIENT_ID|CLIENT_SECRET|AUTH_URL|TOKEN_URL|API_URL|CONTENT_URL|WEBHOOK_SECRET)$/;

/** `{name}` placeholders (a connection's subdomain) may stand in a URL override's path; checked as `x`. */
const url = z.string().refine((s) => {
  try {
    return /^https?:$/.test(new URL(s.replace(/\{[a-zA-Z][a-zA-Z0-9]*\}/g, 'x')).protocol);
  } catch {
    return false;
  }
}, 'must be an http(s) URL');

/** Keyed by the slug as the variables spell it (`GOOGLE_DRIVE`). Returns the problems instead of throwing. */
export function loadIntegrationClients(env: Record<string, string | undefined>): {
  clients: Record<string, IntegrationClientConfig>;
  problems: string[];
} {
  const clients: Record<string, IntegrationClientConfig> = {};
  const problems: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    const m = NAME.exec(name);
    if (!m || value === undefined || value === '') continue;
    const [, slug, setting] = m as unknown as [string, string, keyof typeof SETTINGS];
    if (setting.endsWith('_URL') && !url.safeParse(value).success) {
      problems.push(`${name}: must be an http(s) URL`);
      continue;
    }
    clients[slug] ??= {};
    clients[slug][SETTINGS[setting]] = value;
  }
  for (const c of Object.values(clients)) c.contentUrl ??= c.apiUrl;
  return { clients, problems };
}
