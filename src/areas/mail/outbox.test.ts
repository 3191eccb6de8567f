import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedMember, seedV1Tenant } from '../../../test/seed.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import type { ManualClock } from '../../core/clock.ts';
import { mailEmails } from './tables.ts';
import { deliverEmail } from './worker.ts';

// The dev inbox functions (listOutboxForCli / getOutboxMessageForCli) as the dashboard uses them:
// newest first, search over subject/From/To, the status filter, pages, environments, members only.

let t: TestApp;
let a: V1Tenant;
let ids: Record<string, string>; // subject → outbox id
beforeAll(async () => {
  t = await testApp({ queue: true });
  a = await seedV1Tenant(t.deps);
  ids = {};
  const mails: [string, Record<string, unknown>][] = [
    [a.live, { from: 'Acme <hello@acme.test>', to: 'ada@example.com', subject: 'Welcome Ada' }],
    [a.live, { from: 'billing@acme.test', to: ['grace@example.com'], subject: 'Invoice 100%' }],
    [a.live, { from: 'Acme <hello@acme.test>', to: ['Grace <grace@example.com>'], subject: 'Reset_pw' }],
    [a.test, { from: 'sandbox@acme.test', to: 'ada@example.com', subject: 'Sandbox hello' }],
  ];
  for (const [key, body] of mails) {
    const sent = (await t.v1('POST', '/mail/send', key, { ...body, text: 'Hi', html: '<p>Hi</p>' })).json();
    expect(await deliverEmail(t.deps, sent.id)).toBe('delivered');
    (t.clock as ManualClock).advance(1000); // distinct times, so "newest first" is observable
  }
  const all = (await list({})).json();
  for (const m of all.items) ids[m.subject] = m.id;
});
afterAll(async () => {
  await t?.close();
});

function list(q: Record<string, unknown>, token = a.owner.token) {
  return t.call('listOutboxForCli', { orgSlug: a.org.slug, ...q }, token);
}
const subjects = (res: { json(): { items: { subject: string }[] } }) =>
  res.json().items.map((m) => m.subject);

describe('listOutboxForCli', () => {
  it('lists both environments newest first with the e-mail status', async () => {
    const res = await list({});
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ total: 4, hasMore: false });
    expect(subjects(res)).toEqual(['Sandbox hello', 'Reset_pw', 'Invoice 100%', 'Welcome Ada']);
    expect(res.json().items[0]).toMatchObject({
      environment: 'sandbox',
      from: 'sandbox@acme.test',
      to: ['ada@example.com'],
      status: 'delivered',
    });
    expect(subjects(await list({ environment: 'sandbox' }))).toEqual(['Sandbox hello']);
    expect(subjects(await list({ environment: 'production' }))).toHaveLength(3);
  });

  it('searches subject, From and To case-insensitively, with wildcards taken literally', async () => {
    expect(subjects(await list({ search: 'welcome' }))).toEqual(['Welcome Ada']);
    expect(subjects(await list({ search: 'BILLING@' }))).toEqual(['Invoice 100%']);
    expect(subjects(await list({ search: 'grace' }))).toEqual(['Reset_pw', 'Invoice 100%']);
    expect(subjects(await list({ search: 'grace', environment: 'sandbox' }))).toEqual([]);
    expect(subjects(await list({ search: 'ada@example.com' }))).toEqual(['Sandbox hello', 'Welcome Ada']);
    // `%` and `_` are characters to find, not patterns that match everything.
    expect(subjects(await list({ search: '%' }))).toEqual(['Invoice 100%']);
    expect(subjects(await list({ search: '_' }))).toEqual(['Reset_pw']);
    expect(subjects(await list({ search: 'nothing like this' }))).toEqual([]);
    // Blank search is no search.
    expect((await list({ search: '   ' })).json().total).toBe(4);
    const found = (await list({ search: 'grace', limit: 1 })).json();
    expect(found).toMatchObject({ total: 2, hasMore: true });
  });

  it('filters on the e-mail status', async () => {
    expect((await list({ status: 'delivered' })).json().total).toBe(4);
    expect((await list({ status: 'failed' })).json()).toMatchObject({ items: [], total: 0 });
    // The record can change after the outbox kept the message (e.g. a bounce reported later).
    const msg = (
      await t.call('getOutboxMessageForCli', { orgSlug: a.org.slug, id: ids['Reset_pw'] }, a.owner.token)
    ).json();
    await t.deps.db.orm.update(mailEmails).set({ status: 'bounced' }).where(eq(mailEmails.id, msg.emailId));
    expect(subjects(await list({ status: 'bounced' }))).toEqual(['Reset_pw']);
    expect(subjects(await list({ status: 'bounced', search: 'invoice' }))).toEqual([]);
    const again = await t.call(
      'getOutboxMessageForCli',
      { orgSlug: a.org.slug, id: ids['Reset_pw'] },
      a.owner.token,
    );
    expect(again.json().status).toBe('bounced');
    await t.deps.db.orm.update(mailEmails).set({ status: 'delivered' }).where(eq(mailEmails.id, msg.emailId));
  });

  it('pages with limit and offset', async () => {
    const p1 = (await list({ limit: 3 })).json();
    expect(p1).toMatchObject({ total: 4, hasMore: true });
    expect(p1.items).toHaveLength(3);
    const p2 = (await list({ limit: 3, offset: 3 })).json();
    expect(p2).toMatchObject({ total: 4, hasMore: false });
    expect(p2.items.map((m: { subject: string }) => m.subject)).toEqual(['Welcome Ada']);
    expect((await list({ offset: 10 })).json()).toMatchObject({ items: [], total: 4, hasMore: false });
  });

  it('refuses bad input with 400 naming the field', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ limit: 0 }, /limit/],
      [{ limit: 101 }, /limit/],
      [{ limit: 'ten' }, /limit/],
      [{ offset: -1 }, /offset/],
      [{ environment: 'staging' }, /environment/],
      [{ status: 'read' }, /status/],
      [{ search: 'x'.repeat(201) }, /search/],
      [{ search: 42 }, /search/],
      [{ extra: true }, /extra|unrecognized/i],
    ];
    for (const [q, msg] of cases) {
      const res = await list(q);
      expect(res.statusCode, JSON.stringify(q)).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_ERROR');
      expect(res.json().error.message).toMatch(msg);
    }
    const bad = await t.call(
      'getOutboxMessageForCli',
      { orgSlug: a.org.slug, id: 'not-a-uuid' },
      a.owner.token,
    );
    expect(bad.statusCode).toBe(404);
    expect(bad.json().error.code).toBe('OUTBOX_MESSAGE_NOT_FOUND');
  });
});

describe('who can read the dev inbox', () => {
  it('any member reads it; another organization sees nothing of it', async () => {
    const member = await seedMember(t.deps, a.org.id, 'member');
    expect((await list({}, member.token)).json().total).toBe(4);
    const got = await t.call(
      'getOutboxMessageForCli',
      { orgSlug: a.org.slug, id: ids['Welcome Ada'] },
      member.token,
    );
    expect(got.statusCode).toBe(200);
    expect(got.json()).toMatchObject({ subject: 'Welcome Ada', html: '<p>Hi</p>', text: 'Hi' });

    const other = await seedV1Tenant(t.deps);
    const theirs = await list({}, other.owner.token);
    expect(theirs.statusCode).toBe(404);
    expect(theirs.json().error.code).toBe('ORG_NOT_FOUND');
    const own = await t.call('listOutboxForCli', { orgSlug: other.org.slug }, other.owner.token);
    expect(own.json()).toMatchObject({ items: [], total: 0 });
    const foreign = await t.call(
      'getOutboxMessageForCli',
      { orgSlug: other.org.slug, id: ids['Welcome Ada'] },
      other.owner.token,
    );
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.code).toBe('OUTBOX_MESSAGE_NOT_FOUND');

    const anon = await t.call('listOutboxForCli', { orgSlug: a.org.slug });
    expect(anon.statusCode).toBe(401);
  });
});
