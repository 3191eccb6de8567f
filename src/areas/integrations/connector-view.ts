import type { Deps } from '../../deps.ts';
import { isConfigured } from './connection-tokens.ts';
import type { Connector } from './connectors/types.ts';
import { supportsWebhooks } from './provider-webhooks.ts';

// A connector as the API and the dashboard show it: its catalogue facts, whether end users can connect it on
// this Pier, what it supports, and what a connection must supply (variables, credentials).

export function connectorView(d: Deps, c: Connector) {
  const a = c.entry.auth;
  const credentials =
    a.kind === 'api_key'
      ? [{ name: 'apiKey' as const, label: a.label }]
      : a.kind === 'basic'
        ? [
            { name: 'username' as const, label: a.usernameLabel },
            ...(a.passwordLabel === null ? [] : [{ name: 'password' as const, label: a.passwordLabel }]),
          ]
        : [];
  return {
    slug: c.slug,
    name: c.name,
    category: c.category,
    categories: c.categories,
    description: c.description,
    features: c.features,
    authType: c.authType,
    configured: isConfigured(d, c),
    pagination: c.pagination,
    logo: c.entry.logo,
    docsUrl: c.entry.docsUrl,
    supports: {
      unified: c.unified,
      passthrough: true,
      syncs: c.unified.includes('crm') || c.unified.includes('storage'),
      webhooks: supportsWebhooks(c.slug),
    },
    variables: Object.entries(c.entry.variables).map(([name, v]) => ({
      name,
      label: v.label,
      example: v.example ?? null,
      required: v.default === undefined,
    })),
    credentials,
  };
}
