import { z } from 'zod';
import { audit } from '../../core/audit/audit.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { MANAGERS, orgForUser, requireRole, slugInput } from '../orgs/index.ts';
import { addDomain, findDomain, listDomains, removeDomain, toDomainOut, verifyDomain } from './domains.ts';

// Sender domains from the CLI (`pier domains …`) and the dashboard: any member lists them, owners and
// admins add, verify and remove. See docs/mail.md.

const recordSchema = z.object({
  kind: z.enum(['verification', 'dkim', 'spf', 'dmarc']),
  type: z.literal('TXT'),
  name: z.string(),
  value: z.string(),
  /** Verification and DKIM are required; SPF and DMARC are advised (receivers trust the mail more). */
  required: z.boolean(),
  state: z.enum(['pending', 'verified', 'failed']),
});
const domainSchema = z.object({
  id: z.string(),
  domain: z.string(),
  status: z.enum(['pending', 'verified']),
  records: z.array(recordSchema),
  lastCheckedAt: z.string().nullable(),
  verifiedAt: z.string().nullable(),
  createdAt: z.string(),
});
const domainInput = z.string().trim().min(1).max(253);

export const addMailDomainForCli = defineFn({
  name: 'addMailDomainForCli',
  minRole: 'manager',
  summary:
    'Adds a sender domain (owner or admin): Pier makes its DKIM key pair and answers the DNS records to publish.',
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput, domain: domainInput }),
  output: domainSchema,
  errors: ['ORG_NOT_FOUND', 'FORBIDDEN', 'DOMAIN_INVALID', 'DOMAIN_EXISTS'],
  handler: async ({ deps, caller }, input) => {
    const { org, role } = await orgForUser(deps, caller.userId, input.orgSlug);
    requireRole(role, MANAGERS);
    const out = await addDomain(deps, org.id, input.domain);
    await audit(deps, { kind: 'user', id: caller.userId }, 'mail-domain.add', org.id, { domain: out.domain });
    return out;
  },
});

export const listMailDomainsForCli = defineFn({
  name: 'listMailDomainsForCli',
  summary: "The organization's sender domains with their DNS records and each record's state.",
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput }),
  output: z.array(domainSchema),
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const { org } = await orgForUser(deps, caller.userId, input.orgSlug);
    return listDomains(deps, org.id);
  },
});

export const getMailDomainForCli = defineFn({
  name: 'getMailDomainForCli',
  summary: 'One sender domain with its DNS records and their state at the last check.',
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput, domain: domainInput }),
  output: domainSchema,
  errors: ['ORG_NOT_FOUND', 'DOMAIN_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const { org } = await orgForUser(deps, caller.userId, input.orgSlug);
    return toDomainOut(deps, await findDomain(deps, org.id, input.domain));
  },
});

export const verifyMailDomainForCli = defineFn({
  name: 'verifyMailDomainForCli',
  minRole: 'manager',
  summary:
    'Looks the domain’s records up in DNS now (owner or admin); verified once the verification and DKIM records match.',
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput, domain: domainInput }),
  output: domainSchema,
  errors: ['ORG_NOT_FOUND', 'FORBIDDEN', 'DOMAIN_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const { org, role } = await orgForUser(deps, caller.userId, input.orgSlug);
    requireRole(role, MANAGERS);
    const out = await verifyDomain(deps, org.id, input.domain);
    await audit(deps, { kind: 'user', id: caller.userId }, 'mail-domain.verify', org.id, {
      domain: out.domain,
      status: out.status,
    });
    return out;
  },
});

export const removeMailDomainForCli = defineFn({
  name: 'removeMailDomainForCli',
  minRole: 'manager',
  summary: 'Removes a sender domain and its key (owner or admin); live mail from it is refused from then on.',
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput, domain: domainInput }),
  output: z.object({ ok: z.literal(true), domain: z.string() }),
  errors: ['ORG_NOT_FOUND', 'FORBIDDEN', 'DOMAIN_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const { org, role } = await orgForUser(deps, caller.userId, input.orgSlug);
    requireRole(role, MANAGERS);
    const row = await findDomain(deps, org.id, input.domain);
    await removeDomain(deps, org.id, row.domain);
    await audit(deps, { kind: 'user', id: caller.userId }, 'mail-domain.remove', org.id, {
      domain: row.domain,
    });
    return { ok: true as const, domain: row.domain };
  },
});
