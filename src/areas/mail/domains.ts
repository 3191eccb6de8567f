import crypto from 'node:crypto';
import { and, asc, eq } from 'drizzle-orm';
import { isUniqueViolation } from '../../core/db/pg-errors.ts';
import { perObject } from '../../core/per-object.ts';
import type { Deps } from '../../deps.ts';
import { domainOf } from './addresses.ts';
import { dkimTags, stateOf, type TxtLookup, txtResolver } from './domain-dns.ts';
import { mailErrors } from './errors.ts';
import { type DomainRecordState, mailDomains } from './tables.ts';

// Sender domains (docs/decisions/033): an organization adds a domain, publishes the DNS records Pier
// gives it (a verification TXT, the DKIM public key of a key pair Pier made for this domain, and the SPF
// and DMARC values to add), and Pier checks them by DNS. Live mail goes out only from verified domains,
// signed with the domain's own key.

type DomainRow = typeof mailDomains.$inferSelect;
type RecordKind = 'verification' | 'dkim' | 'spf' | 'dmarc';

export const DMARC_VALUE = 'v=DMARC1; p=none;';
const DOMAIN_RE = /^(?=.{4,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

export function normalizeDomain(input: string): string {
  const d = input.trim().toLowerCase().replace(/\.$/, '');
  if (!DOMAIN_RE.test(d)) throw mailErrors.domainInvalid(input);
  return d;
}

/** The SPF mechanism naming the host Pier sends through (the SMTP relay, else Pier's own host). */
export function spfMechanism(deps: Deps): string {
  const host = new URL(deps.config.smtp?.url ?? deps.config.publicUrl).hostname.replace(/^\[|\]$/g, '');
  if (/^\d+\.\d+\.\d+\.\d+$/.test(host)) return `ip4:${host}`;
  if (host.includes(':')) return `ip6:${host}`;
  return `a:${host}`;
}

export function toDomainOut(deps: Deps, r: DomainRow) {
  const dkimValue = `v=DKIM1; k=rsa; p=${r.dkimPublicKey}`;
  const rec = (kind: RecordKind, name: string, value: string, required: boolean) => ({
    kind,
    type: 'TXT' as const,
    name,
    value,
    required,
    state: r.records[kind],
  });
  return {
    id: r.id,
    domain: r.domain,
    status: r.status,
    records: [
      rec('verification', `_pier-verification.${r.domain}`, `pier-verification=${r.verificationToken}`, true),
      rec('dkim', `${r.dkimSelector}._domainkey.${r.domain}`, dkimValue, true),
      rec('spf', r.domain, `v=spf1 ${spfMechanism(deps)} ~all`, false),
      rec('dmarc', `_dmarc.${r.domain}`, DMARC_VALUE, false),
    ],
    lastCheckedAt: r.lastCheckedAt?.toISOString() ?? null,
    verifiedAt: r.verifiedAt?.toISOString() ?? null,
    createdAt: r.createdAt.toISOString(),
  };
}
export type DomainOut = ReturnType<typeof toDomainOut>;

export async function addDomain(deps: Deps, orgId: string, input: string): Promise<DomainOut> {
  const domain = normalizeDomain(input);
  // 2048-bit RSA: what Gmail and Yahoo expect of bulk senders. Made once per domain, in the background
  // thread pool, so the event loop does not stall on it.
  const { publicKey, privateKey } = await new Promise<{ publicKey: Buffer; privateKey: string }>(
    (resolve, reject) =>
      crypto.generateKeyPair(
        'rsa',
        {
          modulusLength: 2048,
          publicKeyEncoding: { type: 'spki', format: 'der' },
          privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
        },
        (err, pub, priv) => (err ? reject(err) : resolve({ publicKey: pub, privateKey: priv })),
      ),
  );
  const now = deps.clock.now();
  try {
    const [row] = await deps.db.orm
      .insert(mailDomains)
      .values({
        orgId,
        domain,
        verificationToken: crypto.randomBytes(16).toString('hex'),
        // A dated selector, so a later key can be published beside this one (rotation) under a new name.
        dkimSelector: `pier${now.toISOString().slice(0, 7).replace('-', '')}`,
        dkimPublicKey: publicKey.toString('base64'),
        dkimPrivateKeyEnc: deps.keyring.encrypt(privateKey),
        status: 'pending',
        records: { verification: 'pending', dkim: 'pending', spf: 'pending', dmarc: 'pending' },
        createdAt: now,
      })
      .returning();
    return toDomainOut(deps, row!);
  } catch (err) {
    if (isUniqueViolation(err)) throw mailErrors.domainExists(domain);
    throw err;
  }
}

export async function findDomain(deps: Deps, orgId: string, input: string): Promise<DomainRow> {
  let domain: string;
  try {
    domain = normalizeDomain(input);
  } catch {
    throw mailErrors.domainNotFound();
  }
  const [row] = await deps.db.orm
    .select()
    .from(mailDomains)
    .where(and(eq(mailDomains.orgId, orgId), eq(mailDomains.domain, domain)));
  if (!row) throw mailErrors.domainNotFound();
  return row;
}

export async function listDomains(deps: Deps, orgId: string): Promise<DomainOut[]> {
  const rows = await deps.db.orm
    .select()
    .from(mailDomains)
    .where(eq(mailDomains.orgId, orgId))
    .orderBy(asc(mailDomains.domain));
  return rows.map((r) => toDomainOut(deps, r));
}

export async function removeDomain(deps: Deps, orgId: string, input: string): Promise<void> {
  const row = await findDomain(deps, orgId, input);
  await deps.db.orm.delete(mailDomains).where(eq(mailDomains.id, row.id));
  forgetSigningKey(deps, orgId, row.domain);
}

/** Looks every record up and stores what it found; the domain is verified while both required ones match. */
export async function verifyDomain(
  deps: Deps,
  orgId: string,
  input: string,
  lookup: TxtLookup = txtResolver(deps.config),
): Promise<DomainOut> {
  const row = await findDomain(deps, orgId, input);
  const safe = async (name: string) => {
    try {
      return await lookup(name);
    } catch (err) {
      // An unreachable DNS server proves nothing either way: the record stays pending.
      deps.log.warn({ err, name }, 'sender domain DNS lookup failed');
      return null;
    }
  };
  const [token, dkim, spf, dmarc] = await Promise.all([
    safe(`_pier-verification.${row.domain}`),
    safe(`${row.dkimSelector}._domainkey.${row.domain}`),
    safe(row.domain),
    safe(`_dmarc.${row.domain}`),
  ]);
  const mechanism = spfMechanism(deps);
  const records: Record<RecordKind, DomainRecordState> = {
    verification: stateOf(token, (v) => v.trim() === `pier-verification=${row.verificationToken}`),
    dkim: stateOf(dkim, (v) => dkimTags(v).get('p') === row.dkimPublicKey),
    spf: stateOf(spf?.filter((v) => /^v=spf1(\s|$)/i.test(v)) ?? null, (v) =>
      v.split(/\s+/).includes(mechanism),
    ),
    dmarc: stateOf(dmarc?.filter((v) => /^v=DMARC1/i.test(v)) ?? null, () => true),
  };
  const verified = records.verification === 'verified' && records.dkim === 'verified';
  const now = deps.clock.now();
  const [updated] = await deps.db.orm
    .update(mailDomains)
    .set({
      records,
      status: verified ? 'verified' : 'pending',
      lastCheckedAt: now,
      verifiedAt: verified ? (row.verifiedAt ?? now) : row.verifiedAt,
    })
    .where(eq(mailDomains.id, row.id))
    .returning();
  forgetSigningKey(deps, orgId, row.domain);
  return toDomainOut(deps, updated!);
}

/**
 * Live mail only from verified domains: every From of a request is checked before anything is queued.
 * Throws SENDER_DOMAIN_NOT_VERIFIED naming the first domain that is not.
 */
export async function assertSenderDomains(deps: Deps, orgId: string, froms: string[]): Promise<void> {
  const wanted = [...new Set(froms.map(domainOf))];
  const rows = await deps.db.orm
    .select({ domain: mailDomains.domain })
    .from(mailDomains)
    .where(and(eq(mailDomains.orgId, orgId), eq(mailDomains.status, 'verified')));
  const ok = new Set(rows.map((r) => r.domain));
  const missing = wanted.find((d) => !ok.has(d));
  if (missing) throw mailErrors.senderDomainNotVerified(missing);
}

// The signing keys of verified domains, per process: decrypting a key per message would cost more than
// signing it. A minute at most stale; verify and remove drop the entry at once on this node. The entry is
// the lookup's promise, so the 200 mails of a batch that all miss at once make one query and one
// decryption, not 200 (the bench profile showed 201 lookups per 1,000 mails).
const KEY_TTL_MS = 60_000;
type SigningKey = { domainName: string; keySelector: string; privateKey: string } | null;
const keyCacheOf = perObject<Deps, Map<string, { key: Promise<SigningKey>; at: number }>>(() => new Map());

function forgetSigningKey(deps: Deps, orgId: string, domain: string): void {
  keyCacheOf(deps).delete(`${orgId}/${domain}`);
}

async function loadSigningKey(deps: Deps, orgId: string, domain: string): Promise<SigningKey> {
  const [row] = await deps.db.orm
    .select()
    .from(mailDomains)
    .where(
      and(eq(mailDomains.orgId, orgId), eq(mailDomains.domain, domain), eq(mailDomains.status, 'verified')),
    );
  return row
    ? {
        domainName: row.domain,
        keySelector: row.dkimSelector,
        privateKey: deps.keyring.decrypt(row.dkimPrivateKeyEnc),
      }
    : null;
}

/** The DKIM key for a tenant's mail from `domain`: its verified domain's own key, or none. */
export function tenantSigningKey(deps: Deps, orgId: string, domain: string): Promise<SigningKey> {
  const cache = keyCacheOf(deps);
  const id = `${orgId}/${domain}`;
  const now = Date.now();
  const hit = cache.get(id);
  if (hit && now - hit.at < KEY_TTL_MS) return hit.key;
  const entry = { key: loadSigningKey(deps, orgId, domain), at: now };
  cache.set(id, entry);
  // A failed lookup is not kept: the next message asks again.
  entry.key.catch(() => {
    if (cache.get(id) === entry) cache.delete(id);
  });
  return entry.key;
}
