import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type DnsServer, startDnsServer } from '../dns-server.ts';
import { type TestApp, testApp, uniq } from '../harness.ts';
import { seedApiKey, seedOperator, seedOrg } from '../seed.ts';
import { json, pier, removeScratchHomes, scratchHome } from './cli-helpers.ts';

// `pier domains …` and `pier admin user verify` / `pier admin mail` against a real server and a real DNS
// server on 127.0.0.1.

let t: TestApp;
let url: string;
let dns: DnsServer;
beforeAll(async () => {
  dns = await startDnsServer();
  t = await testApp({ env: { DNS_SERVERS: dns.address } });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  removeScratchHomes();
  await t?.close();
  await dns?.close();
});

type Domain = {
  domain: string;
  status: string;
  records: { kind: string; name: string; value: string; state: string }[];
};

it('adds a domain, prints its records, verifies it by DNS, lists and removes it', async () => {
  const { org, owner } = await seedOrg(t.deps);
  const live = (await seedApiKey(t.deps, org.id, 'live')).key;
  const home = scratchHome();
  const run = (args: string[]) => pier(args, { url, home, env: { PIER_TOKEN: owner.token } });
  const domain = `${uniq('cli')}.example.com`;

  const human = await run(['domains', 'add', domain, '--org', org.slug]);
  expect(human.code).toBe(0);
  expect(human.stdout).toContain(`_pier-verification.${domain}`);
  expect(human.stdout).toMatch(/v=DKIM1; k=rsa; p=/);
  const [added] = json<Domain[]>(await run(['domains', 'list', '--org', org.slug, '--json']));
  expect(added).toMatchObject({ domain, status: 'pending' });

  const pending = await run(['domains', 'verify', domain, '--org', org.slug]);
  expect(pending.code).toBe(1);
  expect(pending.stdout).toContain(`${domain}: pending`);
  for (const r of added!.records.filter((x) => x.kind === 'verification' || x.kind === 'dkim'))
    dns.txt.set(r.name, [r.value]);
  const verified = await run(['domains', 'verify', domain, '--org', org.slug, '--json']);
  expect(verified.code).toBe(0);
  expect(json<Domain>(verified).status).toBe('verified');
  const sent = await t.v1('POST', '/mail/send', live, {
    from: `hi@${domain}`,
    to: 'a@example.com',
    subject: 'x',
    text: 'y',
  });
  expect(sent.statusCode).toBe(200);

  expect(json(await run(['domains', 'rm', domain, '--org', org.slug, '--json']))).toEqual({
    ok: true,
    domain,
  });
  expect((await run(['domains', 'list', '--org', org.slug])).stdout).toContain('No sender domains');
}, 120_000); // six CLI processes: slow on a loaded machine

it('pier admin mail shows Pier’s own mail; pier admin user verify verifies', async () => {
  const op = (await seedOperator(t.deps)).token;
  const email = `${uniq('cli-user')}@example.com`;
  const signUp = await t.app.inject({
    method: 'POST',
    url: '/api/dashboard/sign-up',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ email, password: 'correct horse battery' }),
  });
  expect(signUp.json().user.emailVerified).toBe(false);
  const home = scratchHome();
  const run = (args: string[]) => pier(args, { url, home, env: { PIER_OPERATOR_KEY: op } });
  const v = json<{ email: string; emailVerified: boolean }>(
    await run(['admin', 'user', 'verify', '--email', email, '--json']),
  );
  expect(v).toMatchObject({ email, emailVerified: true });
  // The verification mail is accepted for delivery; without SMTP_URL the outbox keeps it once the queue
  // has run, so this only checks the command answers.
  const mail = await run(['admin', 'mail', '--to', email]);
  expect(mail.code).toBe(0);
});
