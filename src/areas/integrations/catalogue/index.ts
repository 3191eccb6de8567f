import accounting from './accounting.json' with { type: 'json' };
import calendar from './calendar.json' with { type: 'json' };
import communication from './communication.json' with { type: 'json' };
import crm from './crm.json' with { type: 'json' };
import ecommerce from './ecommerce.json' with { type: 'json' };
import hris from './hris.json' with { type: 'json' };
import marketing from './marketing.json' with { type: 'json' };
import productivity from './productivity.json' with { type: 'json' };
import { type ProviderEntry, providerEntry } from './schema.ts';
import storage from './storage.json' with { type: 'json' };
import ticketing from './ticketing.json' with { type: 'json' };

// The provider catalogue: every provider Pier can connect to, as data (one JSON file per family, one entry
// per provider), validated against the schema when the area loads. A bad entry throws here, so Pier does
// not start with a provider it cannot call.

export const RAW_CATALOGUE: readonly unknown[] = [
  ...crm,
  ...storage,
  ...communication,
  ...productivity,
  ...accounting,
  ...ticketing,
  ...ecommerce,
  ...calendar,
  ...marketing,
  ...hris,
];

/** Validates raw entries; throws one error naming every bad entry and field. */
export function parseCatalogue(raw: readonly unknown[]): ProviderEntry[] {
  const problems: string[] = [];
  const out: ProviderEntry[] = [];
  const seen = new Set<string>();
  raw.forEach((item, i) => {
    const r = providerEntry.safeParse(item);
    const name = (item as { slug?: unknown })?.slug ?? `#${i}`;
    if (!r.success) {
      for (const issue of r.error.issues)
        problems.push(`${String(name)}: ${issue.path.join('.') || '(entry)'}: ${issue.message}`);
      return;
    }
    if (seen.has(r.data.slug)) problems.push(`${r.data.slug}: listed twice`);
    seen.add(r.data.slug);
    out.push(r.data);
  });
  if (problems.length) throw new Error(`integrations catalogue:\n  ${problems.join('\n  ')}`);
  return out;
}

export const catalogue: readonly ProviderEntry[] = parseCatalogue(RAW_CATALOGUE);
