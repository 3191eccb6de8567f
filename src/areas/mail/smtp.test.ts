import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import { type SmtpSink, startSmtpSink } from '../../../test/smtp-sink.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import { parseHeaders } from './transport.ts';
import { closeMailTransport, deliverEmail } from './worker.ts';

// Delivery through a real SMTP server on 127.0.0.1 (pooled nodemailer transport, DKIM on). The test runs
// each delivery attempt itself, so retries need no waiting.

let t: TestApp;
let sink: SmtpSink;
let a: V1Tenant;
const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 1024 });

beforeAll(async () => {
  sink = await startSmtpSink();
  t = await testApp({
    queue: true,
    env: {
      SMTP_URL: sink.url,
      SMTP_IGNORE_TLS: 'true',
      MAIL_RETRY_DELAYS_SEC: '0,0',
      DKIM_DOMAIN: 'acme.test',
      DKIM_SELECTOR: 'pier',
      DKIM_PRIVATE_KEY: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    },
  });
  a = await seedV1Tenant(t.deps);
});
afterAll(async () => {
  if (t) closeMailTransport(t.deps);
  await t?.close();
  await sink?.close();
});

const from = 'Acme <hello@acme.test>';
const uniq = (prefix: string) => `${prefix}-${crypto.randomBytes(3).toString('hex')}@example.com`;

async function send(body: Record<string, unknown>, key = a.live) {
  const r = await t.v1('POST', '/mail/send', key, { from, subject: 'Hi', text: 'plain', ...body });
  expect(r.statusCode, r.body).toBe(200);
  return r.json() as { id: string };
}
const get = async (id: string, key = a.live) => (await t.v1('GET', `/mail/emails/${id}`, key)).json();
const arrivedFor = (to: string) => sink.received.filter((m) => m.to.includes(to));

describe('SMTP delivery', () => {
  it('delivers both parts, headers and template substitution, signed with DKIM', async () => {
    const tpl = (
      await t.v1('POST', '/mail/templates', a.live, {
        name: 'receipt',
        subject: 'Receipt {{number}}',
        html: '<h1>Thanks {{name}}</h1>',
        text: 'Thanks {{name}}',
      })
    ).json();
    const to = uniq('ada');
    const email = await send({
      to: [to, `Grace <${uniq('grace')}>`],
      replyTo: 'support@acme.test',
      subject: undefined,
      text: undefined,
      templateId: tpl.id,
      templateVariables: { number: 'A-17', name: 'Ada <3' },
    });
    expect(await deliverEmail(t.deps, email.id)).toBe('sent');
    const [msg] = arrivedFor(to);
    expect(msg).toBeDefined();
    expect(msg!.from).toBe('hello@acme.test');
    expect(msg!.to).toHaveLength(2);
    const headers = new Map(parseHeaders(msg!.raw).map(([k, v]) => [k.toLowerCase(), v]));
    expect(headers.get('subject')).toBe('Receipt A-17');
    expect(headers.get('from')).toBe('Acme <hello@acme.test>');
    expect(headers.get('reply-to')).toBe('support@acme.test');
    expect(headers.get('message-id')).toBe(`<${email.id}@acme.test>`);
    expect(headers.get('x-pier-email-id')).toBe(email.id);
    expect(headers.get('dkim-signature')).toMatch(/d=acme\.test;.*s=pier;/);
    expect(msg!.raw).toMatch(/Content-Type: text\/plain/);
    expect(msg!.raw).toMatch(/Content-Type: text\/html/);
    expect(msg!.raw).toContain('Thanks Ada <3');
    expect(msg!.raw).toContain('<h1>Thanks Ada &lt;3</h1>');

    const got = await get(email.id);
    expect(got.status).toBe('sent');
    expect(got.sentAt).not.toBeNull();
    expect(got.events.at(-1)).toMatchObject({ type: 'sent', detail: { transport: 'smtp' } });
  });

  it('retries temporary (4xx) replies with back-off and gives up after the last retry', async () => {
    const to = uniq('temp2');
    const email = await send({ to });
    expect(await deliverEmail(t.deps, email.id)).toBe('queued');
    expect(await deliverEmail(t.deps, email.id)).toBe('queued');
    expect(await deliverEmail(t.deps, email.id)).toBe('sent');
    const got = await get(email.id);
    expect(got.attempts).toBe(3);
    expect(got.events.filter((e: { type: string }) => e.type === 'deferred')).toHaveLength(2);
    expect(got.events[1 + 1].detail.response).toMatch(/^451/);
    expect(arrivedFor(to)).toHaveLength(1);

    const never = await send({ to: uniq('temp9') });
    for (let i = 0; i < 3; i++) await deliverEmail(t.deps, never.id);
    const failed = await get(never.id);
    expect(failed.status).toBe('failed');
    expect(failed.failureReason).toMatch(/^gave up after 3 attempts: 451/);
    expect(await deliverEmail(t.deps, never.id)).toBeNull();
  });

  it('a hard bounce suppresses the address; later sends fail as suppressed until it is removed', async () => {
    const to = uniq('bounce');
    const email = await send({ to });
    expect(await deliverEmail(t.deps, email.id)).toBe('bounced');
    expect((await get(email.id)).failureReason).toMatch(/^550/);

    const list = (await t.v1('GET', '/mail/suppressions', a.live)).json();
    expect(list.items).toContainEqual(expect.objectContaining({ address: to, emailId: email.id }));
    // The sandbox has its own list.
    expect((await t.v1('GET', '/mail/suppressions', a.test)).json().total).toBe(0);

    const later = await send({ to: [to.toUpperCase()] });
    expect(await deliverEmail(t.deps, later.id)).toBe('failed');
    const got = await get(later.id);
    expect(got.failureReason).toBe('suppressed');
    expect(got.events.map((e: { type: string }) => e.type)).toEqual([
      'queued',
      'sending',
      'suppressed',
      'failed',
    ]);

    // With another recipient, only the suppressed one is dropped.
    const ok = uniq('ok');
    const mixed = await send({ to: [to, ok] });
    expect(await deliverEmail(t.deps, mixed.id)).toBe('sent');
    expect(arrivedFor(ok)[0]!.to).toEqual([ok]);

    expect((await t.v1('DELETE', `/mail/suppressions/${encodeURIComponent(to)}`, a.live)).json()).toEqual({
      success: true,
    });
    const again = await t.v1('DELETE', `/mail/suppressions/${encodeURIComponent(to)}`, a.live);
    expect(again.json().error.code).toBe('SUPPRESSION_NOT_FOUND');
    const retry = await send({ to });
    expect(await deliverEmail(t.deps, retry.id)).toBe('bounced'); // tried again, not suppressed
  });

  it('fails on a permanent (5xx) reply to the message', async () => {
    const email = await send({ to: uniq('reject') });
    expect(await deliverEmail(t.deps, email.id)).toBe('failed');
    const got = await get(email.id);
    expect(got.failureReason).toMatch(/^554/);
    expect(
      (await t.v1('GET', '/mail/suppressions', a.live))
        .json()
        .items.map((s: { address: string }) => s.address),
    ).not.toContain(got.to[0]);
  });

  it('sandbox (test key) mail never leaves the outbox, even with SMTP configured', async () => {
    const to = uniq('sandbox');
    const email = await send({ to }, a.test);
    expect(await deliverEmail(t.deps, email.id)).toBe('delivered');
    expect(arrivedFor(to)).toHaveLength(0);
    const box = (
      await t.call('listOutboxForCli', { orgSlug: a.org.slug, environment: 'sandbox' }, a.owner.token)
    ).json();
    expect(box.items.map((m: { emailId: string }) => m.emailId)).toContain(email.id);
    // Live and test keys never see each other's mail.
    expect((await t.v1('GET', `/mail/emails/${email.id}`, a.live)).statusCode).toBe(404);
  });
});
