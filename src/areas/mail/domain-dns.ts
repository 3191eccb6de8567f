import { Resolver } from 'node:dns/promises';
import type { Config } from '../../config.ts';
import type { DomainRecordState } from './tables.ts';

// DNS checks of a sender domain's records. The system resolver by default; DNS_SERVERS (host:port, IP
// addresses) points them at the installation's own DNS server (air-gapped installs, and the tests' local
// server). Every lookup reads TXT records; a record split into several strings is joined, as DKIM does.

export type TxtLookup = (name: string) => Promise<string[] | null>;

const MISSING = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN', 'ENONAME']);

/** TXT records at a name (each one's strings joined); null when the name has none; throws on DNS failure. */
export function txtResolver(config: Pick<Config, 'dnsServers'>): TxtLookup {
  const resolver = new Resolver({ timeout: 3000, tries: 2 });
  if (config.dnsServers.length) resolver.setServers(config.dnsServers);
  return async (name) => {
    try {
      const records = await resolver.resolveTxt(name);
      return records.map((chunks) => chunks.join(''));
    } catch (err) {
      if (MISSING.has((err as { code?: string }).code ?? '')) return null;
      throw err;
    }
  };
}

/** `v=DKIM1; k=rsa; p=…` → its tags, for comparing the published key with ours whatever the spacing. */
export function dkimTags(record: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of record.split(';')) {
    const i = part.indexOf('=');
    if (i > 0) tags.set(part.slice(0, i).trim().toLowerCase(), part.slice(i + 1).replace(/\s+/g, ''));
  }
  return tags;
}

/** A record is verified when one TXT value matches, failed when others are there, pending when none is. */
export function stateOf(values: string[] | null, matches: (v: string) => boolean): DomainRecordState {
  if (!values?.length) return 'pending';
  return values.some(matches) ? 'verified' : 'failed';
}
