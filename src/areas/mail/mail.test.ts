import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import { expectV1Security, type V1Tenant } from '../../../test/v1-security.ts';
import { deliverEmail } from './worker.ts';

// The mail API on the built-in outbox (no SMTP_URL): the queue is started but the test runs deliveries
// itself (deliverEmail), so every step is deterministic. SMTP behaviour is in smtp.test.ts.

let t: TestApp;
let a: V1Tenant;
beforeAll(async () => {
  t = await testApp({ queue: true });
  a = await seedV1Tenant(t.deps);
});
afterAll(async () => {
  await t?.close();
});

const base = { from: 'Acme <hello@acme.test>', to: 'ada@example.com', subject: 'Hello', text: 'Hi there' };
const inMinutes = (m: number) => new Date(t.clock.now().getTime() + m * 60_000).toISOString();

async function send(key: string, body: unknown, headers?: Record<string, string>) {
  return t.v1('POST', '/mail/send', key, body, headers);
}

describe('send, get and the outbox', () => {
  it('accepts an e-mail, delivers it to the outbox as real MIME and records its history', async () => {
    const res = await send(a.live, {
      ...base,
      to: ['ada@example.com', 'Grace Hopper <grace@example.com>'],
      html: '<p>Hi <b>there</b></p>',
      replyTo: 'support@acme.test',
    });
    expect(res.statusCode).toBe(200);
    const email = res.json();
    expect(email).toMatchObject({
      object: 'email',
      status: 'queued',
      to: ['ada@example.com', 'Grace Hopper <grace@example.com>'],
      replyTo: ['support@acme.test'],
      scheduledAt: null,
    });
    expect(await deliverEmail(t.deps, email.id)).toBe('delivered');
    expect(await deliverEmail(t.deps, email.id)).toBeNull(); // a second job run does nothing

    const got = (await t.v1('GET', `/mail/emails/${email.id}`, a.live)).json();
    expect(got.status).toBe('delivered');
    expect(got.events.map((e: { type: string }) => e.type)).toEqual([
      'queued',
      'sending',
      'sent',
      'delivered',
    ]);

    const list = await t.call('listOutboxForCli', { orgSlug: a.org.slug }, a.owner.token);
    const item = list.json().items.find((m: { emailId: string }) => m.emailId === email.id);
    expect(item).toMatchObject({ subject: 'Hello', environment: 'production' });
    const msg = (
      await t.call('getOutboxMessageForCli', { orgSlug: a.org.slug, id: item.id }, a.owner.token)
    ).json();
    expect(msg.raw).toMatch(/Content-Type: multipart\/alternative/);
    expect(msg.raw).toContain('Hi there');
    expect(msg.html).toBe('<p>Hi <b>there</b></p>');
    const headers = Object.fromEntries(msg.headers.map(([k, v]: [string, string]) => [k.toLowerCase(), v]));
    expect(headers.to).toBe('ada@example.com, Grace Hopper <grace@example.com>');
    expect(headers['reply-to']).toBe('support@acme.test');
    expect(headers['message-id']).toBe(`<${email.id}@acme.test>`);
    expect(msg.size).toBe(Buffer.byteLength(msg.raw));

    const other = await seedV1Tenant(t.deps);
    const hidden = await t.call(
      'getOutboxMessageForCli',
      { orgSlug: a.org.slug, id: item.id },
      other.owner.token,
    );
    expect(hidden.json().error.code).toBe('ORG_NOT_FOUND');
    const foreign = await t.call(
      'getOutboxMessageForCli',
      { orgSlug: other.org.slug, id: item.id },
      other.owner.token,
    );
    expect(foreign.json().error.code).toBe('OUTBOX_MESSAGE_NOT_FOUND');
  });

  it('refuses bad input with 400 naming the field', async () => {
    const cases: [unknown, RegExp][] = [
      [{ ...base, from: 'not an address' }, /from/],
      [{ ...base, to: 'x@y' }, /to/],
      [{ ...base, to: Array.from({ length: 51 }, (_, i) => `u${i}@example.com`) }, /to/],
      [{ ...base, to: [] }, /to/],
      [{ ...base, subject: undefined }, /subject/],
      [{ ...base, scheduledAt: 'tomorrow' }, /scheduledAt/],
      [{ ...base, scheduledAt: inMinutes(-1) }, /in the future/],
      [{ ...base, scheduledAt: inMinutes(31 * 24 * 60) }, /30 days/],
      [{ ...base, from: 'a@b.test\r\nBcc: victim@example.com' }, /from/],
      [{ ...base, extra: 1 }, /extra|Unrecognized/i],
    ];
    for (const [body, msg] of cases) {
      const r = await send(a.live, body);
      expect(r.statusCode, JSON.stringify(body)).toBe(400);
      expect(r.json().error.code).toBe('VALIDATION_ERROR');
      expect(r.json().error.message).toMatch(msg);
    }
    const bad = await t.v1('POST', '/mail/send', a.live, '{"from":');
    expect(bad.statusCode).toBe(400);
    const ok50 = await send(a.live, {
      ...base,
      to: Array.from({ length: 50 }, (_, i) => `u${i}@example.com`),
    });
    expect(ok50.statusCode).toBe(200);
  });

  it('replays an idempotent retry instead of sending twice', async () => {
    const tenant = await seedV1Tenant(t.deps);
    const h = { 'idempotency-key': 'welcome-ada' };
    const first = await send(tenant.live, base, h);
    const retry = await send(tenant.live, base, h);
    expect(retry.json().id).toBe(first.json().id);
    const changed = await send(tenant.live, { ...base, subject: 'Other' }, h);
    expect(changed.statusCode).toBe(409);
    expect(changed.json().error.code).toBe('IDEMPOTENCY_CONFLICT');
    expect((await t.v1('GET', '/mail/emails', tenant.live)).json().total).toBe(1);
  });
});

describe('templates', () => {
  it('creates, reads, updates, lists and deletes templates; substitutes escaped variables', async () => {
    const tenant = await seedV1Tenant(t.deps);
    const created = await t.v1('POST', '/mail/templates', tenant.live, {
      name: 'welcome',
      subject: 'Welcome, {{ name }}',
      html: '<p>Hello {{name}}, your code is {{code}}</p>',
      text: 'Hello {{name}}, your code is {{code}}',
    });
    expect(created.statusCode).toBe(201);
    const tpl = created.json();
    expect(tpl.variables).toEqual(['name', 'code']);

    const sent = await send(tenant.live, {
      from: base.from,
      to: base.to,
      templateId: tpl.id,
      templateVariables: { name: '<Ada & "Co">', code: 42 },
    });
    expect(sent.statusCode).toBe(200);
    expect(sent.json()).toMatchObject({
      subject: 'Welcome, <Ada & "Co">',
      html: '<p>Hello &lt;Ada &amp; &quot;Co&quot;&gt;, your code is 42</p>',
      text: 'Hello <Ada & "Co">, your code is 42',
      templateId: tpl.id,
    });

    const missing = await send(tenant.live, {
      from: base.from,
      to: base.to,
      templateId: tpl.id,
      templateVariables: { name: 'x' },
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error).toEqual({
      code: 'TEMPLATE_VARIABLE_MISSING',
      message: "The template needs the variable 'code'.",
    });
    const unknown = await send(tenant.live, {
      from: base.from,
      to: base.to,
      templateId: crypto.randomUUID(),
    });
    expect(unknown.json().error.code).toBe('TEMPLATE_NOT_FOUND');

    const patched = await t.v1('PATCH', `/mail/templates/${tpl.id}`, tenant.live, {
      subject: 'Hi {{name}}',
      html: null,
    });
    expect(patched.json()).toMatchObject({ subject: 'Hi {{name}}', html: null, variables: ['name', 'code'] });
    const emptied = await t.v1('PATCH', `/mail/templates/${tpl.id}`, tenant.live, { text: null });
    expect(emptied.statusCode).toBe(400);
    expect((await t.v1('GET', `/mail/templates/${tpl.id}`, tenant.live)).json().subject).toBe('Hi {{name}}');
    const list = (await t.v1('GET', '/mail/templates', tenant.live)).json();
    expect(list).toMatchObject({ total: 1, hasMore: false });
    expect((await t.v1('DELETE', `/mail/templates/${tpl.id}`, tenant.live)).json()).toEqual({
      success: true,
    });
    expect((await t.v1('GET', `/mail/templates/${tpl.id}`, tenant.live)).statusCode).toBe(404);
  });
});

describe('lists, batch and broadcast', () => {
  it('lists newest first with filters and limit/offset pages', async () => {
    const tenant = await seedV1Tenant(t.deps);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await send(tenant.live, {
        ...base,
        from: i === 0 ? 'ops@acme.test' : base.from,
        to: `u${i}@example.com`,
      });
      ids.push(r.json().id);
      (t.clock as { advance?: (ms: number) => void }).advance?.(1000);
    }
    await deliverEmail(t.deps, ids[2]!);
    const all = (await t.v1('GET', '/mail/emails?limit=2', tenant.live)).json();
    expect(all).toMatchObject({ total: 3, hasMore: true });
    expect(all.items.map((e: { id: string }) => e.id)).toEqual([ids[2], ids[1]]);
    const page2 = (await t.v1('GET', '/mail/emails?limit=2&offset=2', tenant.live)).json();
    expect(page2).toMatchObject({ total: 3, hasMore: false });
    expect(page2.items[0].id).toBe(ids[0]);
    const q = async (qs: string) =>
      (await t.v1('GET', `/mail/emails?${qs}`, tenant.live)).json().items.map((e: { id: string }) => e.id);
    expect(await q('status=delivered')).toEqual([ids[2]]);
    expect(await q('from=OPS@acme.test')).toEqual([ids[0]]);
    expect(await q('to=u1@example.com')).toEqual([ids[1]]);
    expect((await t.v1('GET', '/mail/emails?limit=101', tenant.live)).statusCode).toBe(400);
    expect((await t.v1('GET', '/mail/emails?status=lost', tenant.live)).statusCode).toBe(400);
    // The test key sees the sandbox only.
    expect((await t.v1('GET', '/mail/emails', tenant.test)).json().total).toBe(0);
  });

  it('validates a batch all-or-nothing and creates one record per item', async () => {
    const tenant = await seedV1Tenant(t.deps);
    const items = [
      base,
      { ...base, to: 'b@example.com' },
      { ...base, to: 'c@example.com', scheduledAt: inMinutes(60) },
    ];
    const bad = await t.v1('POST', '/mail/batch', tenant.live, {
      emails: [base, { ...base, to: 'nope' }, base],
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toMatch(/emails\.1\.to/);
    const badVar = await t.v1('POST', '/mail/batch', tenant.live, {
      emails: [base, { ...base, scheduledAt: inMinutes(-5) }],
    });
    expect(badVar.json().error.message).toMatch(/^emails\.1: scheduledAt/);
    expect((await t.v1('POST', '/mail/batch', tenant.live, { emails: [] })).statusCode).toBe(400);
    const tooMany = await t.v1('POST', '/mail/batch', tenant.live, {
      emails: Array.from({ length: 101 }, () => base),
    });
    expect(tooMany.statusCode).toBe(400);
    expect((await t.v1('GET', '/mail/emails', tenant.live)).json().total).toBe(0);

    const ok = await t.v1('POST', '/mail/batch', tenant.live, { emails: items });
    expect(ok.statusCode).toBe(200);
    const emails = ok.json().emails;
    expect(emails.map((e: { to: string[]; status: string }) => [e.to[0], e.status])).toEqual([
      ['ada@example.com', 'queued'],
      ['b@example.com', 'queued'],
      ['c@example.com', 'scheduled'],
    ]);
    expect(new Set(emails.map((e: { id: string }) => e.id)).size).toBe(3);
  });

  it('broadcasts one record per recipient under a broadcast id', async () => {
    const tenant = await seedV1Tenant(t.deps);
    const to = Array.from({ length: 120 }, (_, i) => `r${i}@example.com`);
    const res = await t.v1('POST', '/mail/broadcast', tenant.live, {
      from: base.from,
      to: [...to, 'R0@example.com'],
      subject: 'News',
      html: '<p>News</p>',
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.total).toBe(120); // the same address twice is one recipient
    expect(
      body.emails.every(
        (e: { to: string[]; broadcastId: string }) => e.to.length === 1 && e.broadcastId === body.broadcastId,
      ),
    ).toBe(true);
    const listed = (
      await t.v1('GET', `/mail/emails?broadcastId=${body.broadcastId}&limit=1`, tenant.live)
    ).json();
    expect(listed.total).toBe(120);
    const tooMany = await t.v1('POST', '/mail/broadcast', tenant.live, {
      from: base.from,
      to: Array.from({ length: 1001 }, (_, i) => `r${i}@example.com`),
      subject: 'x',
      html: 'x',
    });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().error.message).toMatch(/^body\.to: Too big/);
  });
});

describe('cancel and resend', () => {
  it('cancels scheduled or queued mail only, and a cancelled e-mail never goes out', async () => {
    const tenant = await seedV1Tenant(t.deps);
    const scheduled = (await send(tenant.live, { ...base, scheduledAt: inMinutes(10) })).json();
    expect(scheduled.status).toBe('scheduled');
    const c = await t.v1('POST', `/mail/emails/${scheduled.id}/cancel`, tenant.live);
    expect(c.json().status).toBe('cancelled');
    expect(await deliverEmail(t.deps, scheduled.id)).toBeNull();
    const again = await t.v1('POST', `/mail/emails/${scheduled.id}/cancel`, tenant.live);
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('EMAIL_NOT_CANCELLABLE');

    const done = (await send(tenant.live, base)).json();
    await deliverEmail(t.deps, done.id);
    const late = await t.v1('POST', `/mail/emails/${done.id}/cancel`, tenant.live);
    expect(late.statusCode).toBe(409);
    expect(late.json().error.message).toMatch(/delivered/);
  });

  it('cancel racing the send: exactly one outcome, recorded', async () => {
    const tenant = await seedV1Tenant(t.deps);
    for (let i = 0; i < 8; i++) {
      const email = (await send(tenant.live, { ...base, scheduledAt: inMinutes(1) })).json();
      const [cancel, delivered] = await Promise.all([
        t.v1('POST', `/mail/emails/${email.id}/cancel`, tenant.live),
        deliverEmail(t.deps, email.id),
      ]);
      const final = (await t.v1('GET', `/mail/emails/${email.id}`, tenant.live)).json();
      const types = final.events.map((e: { type: string }) => e.type);
      if (cancel.statusCode === 200) {
        expect(delivered).toBeNull();
        expect(final.status).toBe('cancelled');
        expect(types).toEqual(['scheduled', 'cancelled']);
      } else {
        expect(cancel.json().error.code).toBe('EMAIL_NOT_CANCELLABLE');
        expect(delivered).toBe('delivered');
        expect(final.status).toBe('delivered');
        expect(types).not.toContain('cancelled');
      }
    }
  });

  it('resends as a new e-mail with the same content', async () => {
    const tenant = await seedV1Tenant(t.deps);
    const first = (await send(tenant.live, { ...base, html: '<p>x</p>' })).json();
    const again = await t.v1('POST', `/mail/emails/${first.id}/resend`, tenant.live);
    expect(again.statusCode).toBe(200);
    const r = again.json();
    expect(r.id).not.toBe(first.id);
    expect(r).toMatchObject({
      resentFrom: first.id,
      status: 'queued',
      subject: 'Hello',
      html: '<p>x</p>',
      to: first.to,
    });
  });
});

describe('security of every mail route', () => {
  it('401 without a key, 403 for other credentials, 404 across organizations and environments', async () => {
    const owner = await seedV1Tenant(t.deps);
    const email = (await send(owner.live, base)).json();
    const tpl = (
      await t.v1('POST', '/mail/templates', owner.live, { name: 'n', subject: 's', text: 't' })
    ).json();
    const resource: [Parameters<TestApp['v1']>[0], string, unknown, string][] = [
      ['GET', `/mail/emails/${email.id}`, undefined, 'EMAIL_NOT_FOUND'],
      ['POST', `/mail/emails/${email.id}/cancel`, undefined, 'EMAIL_NOT_FOUND'],
      ['POST', `/mail/emails/${email.id}/resend`, undefined, 'EMAIL_NOT_FOUND'],
      ['GET', `/mail/templates/${tpl.id}`, undefined, 'TEMPLATE_NOT_FOUND'],
      ['PATCH', `/mail/templates/${tpl.id}`, { name: 'x' }, 'TEMPLATE_NOT_FOUND'],
      ['DELETE', `/mail/templates/${tpl.id}`, undefined, 'TEMPLATE_NOT_FOUND'],
      ['POST', '/mail/send', { ...base, templateId: tpl.id, text: undefined }, 'TEMPLATE_NOT_FOUND'],
    ];
    for (const [method, url, body, notFoundCode] of resource) {
      await expectV1Security(t, { method, url, body, owner, notFoundCode });
    }
    const open: [Parameters<TestApp['v1']>[0], string, unknown][] = [
      ['GET', '/mail/emails', undefined],
      ['POST', '/mail/batch', { emails: [base] }],
      ['POST', '/mail/broadcast', { ...base, to: [base.to] }],
      ['POST', '/mail/templates', { name: 'n', subject: 's', text: 't' }],
      ['GET', '/mail/templates', undefined],
      ['GET', '/mail/suppressions', undefined],
      ['DELETE', '/mail/suppressions/ada@example.com', undefined],
    ];
    for (const [method, url, body] of open) await expectV1Security(t, { method, url, body, owner });
    // The owner's e-mail still exists and is untouched.
    expect((await t.v1('GET', `/mail/emails/${email.id}`, owner.live)).json().status).toBe('queued');
  });
});
