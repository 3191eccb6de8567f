import crypto from 'node:crypto';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DnsServer, startDnsServer } from '../../../test/dns-server.ts';
import { type TestApp, testApp, uniq } from '../../../test/harness.ts';
import { seedApiKey, seedMember, seedOrg } from '../../../test/seed.ts';
import { type SmtpSink, startSmtpSink } from '../../../test/smtp-sink.ts';
import { closeMailTransport, deliverEmail } from './worker.ts';

// Sender domains against a real DNS server on 127.0.0.1 and a real SMTP server: live mail only from a
// verified domain, each message signed with that domain's own key, checked with mailauth against the
// key published in DNS.

let t: TestApp;
let dns: DnsServer;
let sink: SmtpSink;
// The operator's own key signs only the operator's domain (Pier's own mail), never a tenant's.
const operatorKey = crypto.generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey;

beforeAll(async () => {
  dns = await startDnsServer();
  sink = await startSmtpSink();
  t = await testApp({
    queue: true,
    env: {
      DNS_SERVERS: dns.address,
      SMTP_URL: sink.url,
      SMTP_IGNORE_TLS: 'true',
      DKIM_DOMAIN: 'pier-operator.test',
      DKIM_SELECTOR: 'op',
      DKIM_PRIVATE_KEY: operatorKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    },
  });
});
afterAll(async () => {
  if (t) await closeMailTransport(t.deps);
  await t?.close();
  await sink?.close();
  await dns?.close();
});

type Rec = { kind: string; name: string; value: string; state: string; required: boolean };
const rec = (d: { records: Rec[] }, kind: string) => d.records.find((r) => r.kind === kind)!;

async function tenant() {
  const { org, owner } = await seedOrg(t.deps);
  const live = (await seedApiKey(t.deps, org.id, 'live')).key;
  const test = (await seedApiKey(t.deps, org.id, 'test')).key;
  return { org, owner, live, test };
}

async function mailCount(orgId: string): Promise<number> {
  const { rows } = await t.deps.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM mail_emails WHERE org_id = $1',
    [orgId],
  );
  return rows[0]!.n;
}

describe('sender domains', () => {
  it('refuses live mail from an unverified domain with its code, naming the domain; nothing is queued', async () => {
    const a = await tenant();
    const domain = `${uniq('news')}.example.org`;
    const body = { from: `News <hi@${domain}>`, to: 'ada@example.com', subject: 'Hi', text: 'Hello' };
    const res = await t.v1('POST', '/mail/send', a.live, body);
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('SENDER_DOMAIN_NOT_VERIFIED');
    expect(res.json().error.message).toContain(domain);
    const batch = await t.v1('POST', '/mail/batch', a.live, {
      emails: [{ ...body, from: 'x@acme.test' }, body],
    });
    expect(batch.json().error.code).toBe('SENDER_DOMAIN_NOT_VERIFIED');
    const cast = await t.v1('POST', '/mail/broadcast', a.live, { ...body, to: ['a@example.com'] });
    expect(cast.json().error.code).toBe('SENDER_DOMAIN_NOT_VERIFIED');
    expect(await mailCount(a.org.id)).toBe(0);
    // A domain added but not verified is still refused.
    await t.call('addMailDomainForCli', { orgSlug: a.org.slug, domain }, a.owner.token);
    expect((await t.v1('POST', '/mail/send', a.live, body)).statusCode).toBe(403);
    // Test keys send from any address; their mail stays in the dev inbox.
    const sandbox = await t.v1('POST', '/mail/send', a.test, body);
    expect(sandbox.statusCode).toBe(200);
    expect(await deliverEmail(t.deps, sandbox.json().id)).toBe('delivered');
    expect(await mailCount(a.org.id)).toBe(1);
  });

  it('verifies a domain by DNS; its live mail carries a DKIM signature d=<domain> that verifies', async () => {
    const a = await tenant();
    const domain = `${uniq('shop')}.example.com`;
    const added = await t.call(
      'addMailDomainForCli',
      { orgSlug: a.org.slug, domain: domain.toUpperCase() },
      a.owner.token,
    );
    expect(added.statusCode).toBe(200);
    const d = added.json();
    expect(d).toMatchObject({ domain, status: 'pending' });
    const dkim = rec(d, 'dkim');
    expect(dkim.name).toMatch(new RegExp(`^pier\\d{6}\\._domainkey\\.${domain.replace(/\./g, '\\.')}$`));
    expect(dkim.value).toMatch(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/=]{300,}$/);
    expect(rec(d, 'verification')).toMatchObject({ name: `_pier-verification.${domain}`, required: true });
    expect(rec(d, 'spf').value).toMatch(/^v=spf1 .+ ~all$/);
    expect(rec(d, 'dmarc')).toMatchObject({ name: `_dmarc.${domain}`, required: false });
    // The private key is stored encrypted, never as PEM.
    const { rows } = await t.deps.db.query<{ k: string }>(
      'SELECT dkim_private_key_enc AS k FROM mail_domains WHERE domain = $1',
      [domain],
    );
    expect(rows[0]!.k).not.toContain('PRIVATE KEY');

    // Nothing published yet: pending. A wrong verification value: failed.
    const before = (
      await t.call('verifyMailDomainForCli', { orgSlug: a.org.slug, domain }, a.owner.token)
    ).json();
    expect(before.status).toBe('pending');
    expect(before.records.map((r: Rec) => r.state)).toEqual(['pending', 'pending', 'pending', 'pending']);
    dns.txt.set(`_pier-verification.${domain}`, ['pier-verification=wrong']);
    dns.txt.set(dkim.name, [dkim.value]);
    const half = (
      await t.call('verifyMailDomainForCli', { orgSlug: a.org.slug, domain }, a.owner.token)
    ).json();
    expect(half.status).toBe('pending');
    expect(rec(half, 'verification').state).toBe('failed');
    expect(rec(half, 'dkim').state).toBe('verified');

    dns.txt.set(`_pier-verification.${domain}`, [rec(d, 'verification').value]);
    dns.txt.set(domain, [rec(d, 'spf').value]);
    dns.txt.set(`_dmarc.${domain}`, [rec(d, 'dmarc').value]);
    const ok = await t.call('verifyMailDomainForCli', { orgSlug: a.org.slug, domain }, a.owner.token);
    expect(ok.json().status).toBe('verified');
    expect(ok.json().records.map((r: Rec) => r.state)).toEqual([
      'verified',
      'verified',
      'verified',
      'verified',
    ]);
    expect(ok.json().verifiedAt).not.toBeNull();

    const to = `${uniq('ada')}@example.com`;
    const sent = await t.v1('POST', '/mail/send', a.live, {
      from: `Shop <orders@${domain}>`,
      to,
      subject: 'Your order',
      text: 'Thanks for your order.',
    });
    expect(sent.statusCode).toBe(200);
    expect(await deliverEmail(t.deps, sent.json().id)).toBe('sent');
    const [msg] = await sink.waitFor(1).then(() => sink.received.filter((m) => m.to.includes(to)));
    const result = await dkimVerify(Buffer.from(msg!.raw), { resolver: dns.resolve });
    expect(result.results).toHaveLength(1);
    const [sig] = result.results;
    expect(sig!.signingDomain).toBe(domain);
    expect(sig!.status.result).toBe('pass');
    expect(msg!.raw).not.toMatch(/d=pier-operator\.test/);

    // Removed: live mail from it is refused again.
    const rm = await t.call('removeMailDomainForCli', { orgSlug: a.org.slug, domain }, a.owner.token);
    expect(rm.json()).toEqual({ ok: true, domain });
    const again = await t.v1('POST', '/mail/send', a.live, {
      from: `orders@${domain}`,
      to,
      subject: 'x',
      text: 'y',
    });
    expect(again.json().error.code).toBe('SENDER_DOMAIN_NOT_VERIFIED');
  });

  it('members list domains; only owners and admins change them; other organizations see nothing', async () => {
    const a = await tenant();
    const b = await tenant();
    const member = await seedMember(t.deps, a.org.id, 'member');
    const domain = `${uniq('m')}.example.net`;
    expect(
      (await t.call('addMailDomainForCli', { orgSlug: a.org.slug, domain }, member.token)).json().error.code,
    ).toBe('FORBIDDEN');
    await t.call('addMailDomainForCli', { orgSlug: a.org.slug, domain }, a.owner.token);
    const dup = await t.call('addMailDomainForCli', { orgSlug: a.org.slug, domain }, a.owner.token);
    expect(dup.json().error.code).toBe('DOMAIN_EXISTS');
    const bad = await t.call(
      'addMailDomainForCli',
      { orgSlug: a.org.slug, domain: 'localhost' },
      a.owner.token,
    );
    expect(bad.json().error.code).toBe('DOMAIN_INVALID');
    const list = await t.call('listMailDomainsForCli', { orgSlug: a.org.slug }, member.token);
    expect(list.json().map((x: { domain: string }) => x.domain)).toEqual([domain]);
    for (const fn of ['verifyMailDomainForCli', 'removeMailDomainForCli'])
      expect((await t.call(fn, { orgSlug: a.org.slug, domain }, member.token)).json().error.code).toBe(
        'FORBIDDEN',
      );
    // Another organization: its own slug finds no such domain; a's slug is not found at all.
    expect(
      (await t.call('getMailDomainForCli', { orgSlug: b.org.slug, domain }, b.owner.token)).json().error.code,
    ).toBe('DOMAIN_NOT_FOUND');
    expect(
      (await t.call('listMailDomainsForCli', { orgSlug: a.org.slug }, b.owner.token)).json().error.code,
    ).toBe('ORG_NOT_FOUND');
  });
});
