import { PLACEHOLDER } from './catalogue/schema.ts';
import type { Connector } from './connectors/types.ts';
import { integrationsErrors } from './errors.ts';

// A connection's variables: the values that fill its provider's URL templates (Zendesk's subdomain, Zoho's
// data centre). Each is checked against the entry's pattern before it is stored, because it lands in a host
// name; the SSRF guard still checks the address every call resolves to.

export function resolveConnectionConfig(
  c: Connector,
  input: Record<string, string> | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  const vars = c.entry.variables;
  for (const key of Object.keys(input ?? {}))
    if (!vars[key])
      throw integrationsErrors.connectionConfigInvalid(c.slug, `'${key}' is not a variable of ${c.name}`);
  for (const [name, v] of Object.entries(vars)) {
    const value = input?.[name] ?? v.default;
    if (value === undefined)
      throw integrationsErrors.connectionConfigInvalid(c.slug, `${name} (${v.label}) is required`);
    if (!new RegExp(v.pattern).test(value))
      throw integrationsErrors.connectionConfigInvalid(
        c.slug,
        `${name} does not look like ${v.label}${v.example ? `, e.g. '${v.example}'` : ''}`,
      );
    out[name] = value;
  }
  return out;
}

/** Fills `{name}` placeholders; a variable the connection lacks takes its default. */
export function fillTemplate(c: Connector, url: string, config: Record<string, string>): string {
  return url.replace(PLACEHOLDER, (_m, name: string) => {
    const value = config[name] ?? c.entry.variables[name]?.default;
    if (value === undefined) throw integrationsErrors.connectionConfigInvalid(c.slug, `${name} is required`);
    return encodeURIComponent(value).replace(/%2E/gi, '.');
  });
}
