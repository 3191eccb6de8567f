import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp, uniq } from '../../../test/harness.ts';
import { seedOperator, seedOrg, seedPlatform } from '../../../test/seed.ts';
import { mailedToken, systemMailTo } from '../../../test/system-mail.ts';

// Verified e-mail addresses (docs/decisions/033): what is granted by address reaches only an account that
// proved it. The squatter signs up first with someone else's address; the real owner proves it later.

let t: TestApp;
let plat: string;
beforeAll(async () => {
  t = await testApp();
  plat = (await seedPlatform(t.deps, ['org.create'])).token;
});
afterAll(async () => {
  await t?.close();
});

const PASSWORD = 'correct horse battery';
type Browser = { cookie: string; csrf: string };

async function post(url: string, body: unknown, b?: Browser): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url,
    headers: {
      'content-type': 'application/json',
      ...(b ? { cookie: b.cookie, 'x-csrf-token': b.csrf } : {}),
    },
    payload: JSON.stringify(body),
  });
}

function browserOf(res: LightMyRequestResponse): Browser {
  expect(res.statusCode).toBe(200);
  return { cookie: String(res.headers['set-cookie']).split(';')[0]!, csrf: res.json().csrfToken };
}

async function myOrgs(b: Browser): Promise<string[]> {
  const res = await post('/api/fn/listMyOrgsForCli', {}, b);
  expect(res.statusCode).toBe(200);
  return res.json().map((o: { slug: string }) => o.slug);
}

/** An organization inviting the address, and a partner creating one for it. */
async function grantsTo(email: string) {
  const team = await seedOrg(t.deps);
  const inv = await t.call(
    'inviteMemberForCli',
    { orgSlug: team.org.slug, email, role: 'admin' },
    team.owner.token,
  );
  expect(inv.statusCode).toBe(200);
  expect(inv.json()).toMatchObject({ pending: true, inviteUrl: null });
  const created = await t.call('createOrganization', { email, name: 'Victim Co', slug: uniq('vic') }, plat);
  expect(created.statusCode).toBe(200);
  return { invitedTo: team.org.slug, created: created.json().slug as string };
}

describe('verified e-mail', () => {
  it('a squatter who signed up first gets neither the invitation nor the partner-created organization', async () => {
    const email = `${uniq('alice')}@victim.example`;
    const squatter = browserOf(await post('/api/dashboard/sign-up', { email, password: PASSWORD }));
    const probe = await t.app.inject({ url: '/api/dashboard/session', headers: { cookie: squatter.cookie } });
    expect(probe.json().user).toMatchObject({ email, emailVerified: false });

    const { invitedTo, created } = await grantsTo(email);
    expect(await myOrgs(squatter)).toEqual([]);
    const denied = await post('/api/fn/getProjectForCli', { slug: 'nope' }, squatter);
    expect(denied.statusCode).toBe(404);
    // The squatter cannot even make an organization of its own while unproven.
    const own = await post('/api/fn/createOrgForCli', { slug: uniq('sq'), name: 'Mine' }, squatter);
    expect(own.json().error.code).toBe('EMAIL_NOT_VERIFIED');

    // The verification link went to the real owner's mailbox; clicked there (not signed in as the
    // squatter) it verifies nothing.
    const verifyToken = await mailedToken(t.deps, email, 'verify-email');
    expect(verifyToken).toBeTruthy();
    const anon = await post('/api/dashboard/verify-email', { token: verifyToken });
    expect(anon.json().error.code).toBe('AUTH_REQUIRED');
    const other = browserOf(
      await post('/api/dashboard/sign-up', { email: `${uniq('x')}@example.com`, password: PASSWORD }),
    );
    const wrong = await post('/api/dashboard/verify-email', { token: verifyToken }, other);
    expect(wrong.json().error.code).toBe('LINK_INVALID');
    expect(await myOrgs(squatter)).toEqual([]);
    expect(invitedTo && created).toBeTruthy();
  });

  it('the real owner who verifies gets both, and the squatter is locked out', async () => {
    const email = `${uniq('bob')}@victim.example`;
    const squatter = browserOf(await post('/api/dashboard/sign-up', { email, password: PASSWORD }));
    const { invitedTo, created } = await grantsTo(email);

    // The owner signs up too: the address is mailed a way to claim the account.
    const claim = await post('/api/dashboard/sign-up', { email, password: 'the real owner pw' });
    expect(claim.statusCode).toBe(202);
    const token = await mailedToken(t.deps, email, 'set-password');
    const owner = browserOf(
      await post('/api/dashboard/set-password', { token, password: 'the real owner pw' }),
    );
    expect((await myOrgs(owner)).sort()).toEqual([invitedTo, created].sort());

    // Everything the squatter held is gone: session and password.
    const stale = await post('/api/fn/listMyOrgsForCli', {}, squatter);
    expect(stale.statusCode).toBe(401);
    const signIn = await post('/api/dashboard/sign-in', { email, password: PASSWORD });
    expect(signIn.json().error.code).toBe('SIGNIN_FAILED');
    const members = await t.call('listMembersForCli', { orgSlug: created }, (await ownerToken(owner)).token);
    expect(members.json()).toEqual([expect.objectContaining({ email, role: 'owner', pending: false })]);
  });

  it('an owner who signed up themselves verifies with the mailed link in their own session', async () => {
    const email = `${uniq('carol')}@example.com`;
    const me = browserOf(await post('/api/dashboard/sign-up', { email, password: PASSWORD }));
    const { invitedTo, created } = await grantsTo(email);
    expect(await myOrgs(me)).toEqual([]);
    const token = await mailedToken(t.deps, email, 'verify-email');
    const ok = await post('/api/dashboard/verify-email', { token }, me);
    expect(ok.statusCode).toBe(200);
    expect(ok.json().user).toMatchObject({ email, emailVerified: true });
    expect((await myOrgs(me)).sort()).toEqual([invitedTo, created].sort());
    const reuse = await post('/api/dashboard/verify-email', { token }, me);
    expect(reuse.json().error.code).toBe('LINK_INVALID');
    const mails = await systemMailTo(t.deps, email);
    expect(mails[0]).toMatchObject({ subject: 'Verify your e-mail address for Pier' });
    expect(mails[0]!.from).toMatch(/^Pier <no-reply@/);
  });

  it('an operator login code proves the address; pier admin user verify does too', async () => {
    const op = await seedOperator(t.deps);
    const email = `${uniq('dan')}@example.com`;
    const { invitedTo } = await grantsTo(email);
    const code = await t.call('adminCreateLoginCode', { email }, op.token);
    const redeemed = await t.call('exchangeCliAuthCode', { code: code.json().code });
    expect(redeemed.statusCode).toBe(200);
    const mine = await t.call('listMyOrgsForCli', {}, redeemed.json().token);
    expect(mine.json().map((o: { slug: string }) => o.slug)).toContain(invitedTo);

    const erin = `${uniq('erin')}@example.com`;
    const me = browserOf(await post('/api/dashboard/sign-up', { email: erin, password: PASSWORD }));
    const g = await grantsTo(erin);
    const v = await t.call('adminVerifyUser', { email: erin }, op.token);
    expect(v.json()).toMatchObject({ email: erin, emailVerified: true });
    expect((await myOrgs(me)).sort()).toEqual([g.invitedTo, g.created].sort());
    const none = await t.call('adminVerifyUser', { email: 'nobody@example.com' }, op.token);
    expect(none.json().error.code).toBe('USER_NOT_FOUND');
  });
});

async function ownerToken(b: Browser): Promise<{ token: string }> {
  const res = await post('/api/fn/createTokenForCli', { label: 'test' }, b);
  expect(res.statusCode).toBe(200);
  return res.json();
}
