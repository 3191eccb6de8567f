import crypto from 'node:crypto';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import { type SmtpSink, startSmtpSink } from '../../../test/smtp-sink.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import { parseHeaders } from './transport.ts';
import { closeMailTransport, deliverEmail } from './worker.ts';

// What receiving filters look at, on the raw message a real SMTP server received: one-click unsubscribe
// on broadcast mail (RFC 8058) and the suppression it leads to, and a text part for every message.

let t: TestApp;
let sink: SmtpSink;
let a: V1Tenant;
let b: V1Tenant;

beforeAll(async () => {
  sink = await startSmtpSink();
  t = await testApp({ queue: true, env: { SMTP_URL: sink.url, SMTP_IGNORE_TLS: 'true' } });
  a = await seedV1Tenant(t.deps);
  b = await seedV1Tenant(t.deps);
});
afterAll(async () => {
  if (t) await closeMailTransport(t.deps);
  await t?.close();
  await sink?.close();
});

const from = 'Acme <news@acme.test>';
const uniq = (prefix: string) => `${prefix}-${crypto.randomBytes(3).toString('hex')}@example.com`;
const rawFor = (to: string) => sink.received.filter((m) => m.to.includes(to)).map((m) => m.raw);
const header = (raw: string, name: string) =>
  parseHeaders(raw).find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1];

async function v1(method: Parameters<TestApp['v1']>[0], path: string, key: string, body?: unknown) {
  const r = await t.v1(method, path, key, body);
  expect(r.statusCode, r.body).toBe(200);
  return r.json();
}

async function deliveredBroadcast(key: string, to: string): Promise<string> {
  const r = await v1('POST', '/mail/broadcast', key, { from, to: [to], subject: 'News', html: '<p>Hi</p>' });
  expect(await deliverEmail(t.deps, r.emails[0].id)).toBe('sent');
  return rawFor(to).at(-1)!;
}

const unsubscribeUrlOf = (raw: string) => {
  const m = /^<(http[^>]+)>$/.exec(header(raw, 'List-Unsubscribe') ?? '');
  expect(m, 'List-Unsubscribe names one URL').not.toBeNull();
  return m![1]!;
};
const pathOf = (url: string) => new URL(url).pathname;

describe('one-click unsubscribe on broadcast mail', () => {
  it('carries both headers under the DKIM signature; other mail carries none', async () => {
    const to = uniq('reader');
    const raw = await deliveredBroadcast(a.live, to);
    expect(unsubscribeUrlOf(raw)).toMatch(
      /^http:\/\/pier\.test\/mail\/unsubscribe\/[\da-f-]{36}\.[\w-]{22}$/,
    );
    expect(header(raw, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    const signed = /\bh=([^;]+)/.exec(header(raw, 'DKIM-Signature') ?? '')?.[1]?.replace(/\s/g, '');
    expect(signed?.toLowerCase().split(':')).toEqual(
      expect.arrayContaining(['list-unsubscribe', 'list-unsubscribe-post']),
    );

    const single = uniq('single');
    const sent = await v1('POST', '/mail/send', a.live, { from, to: single, subject: 'x', text: 'y' });
    await deliverEmail(t.deps, sent.id);
    expect(header(rawFor(single)[0]!, 'List-Unsubscribe')).toBeUndefined();
  });

  it('GET shows a button and suppresses nothing; POST suppresses; the next mail is not delivered', async () => {
    const to = uniq('leaver');
    const url = pathOf(unsubscribeUrlOf(await deliveredBroadcast(a.live, to)));

    const page = await t.app.inject({ method: 'GET', url });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('<form method="post">');
    expect(page.body).toContain(to);
    const list = async (key: string) =>
      ((await v1('GET', '/mail/suppressions', key)).items as { address: string; reason: string }[]).filter(
        (s) => s.address === to,
      );
    expect(await list(a.live)).toEqual([]);

    // What Gmail sends (RFC 8058 section 3.2).
    const post = await t.app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    });
    expect(post.statusCode, post.body).toBe(200);
    expect(await list(a.live)).toMatchObject([{ address: to, reason: 'unsubscribed' }]);
    // A second click (or a retrying client) is fine.
    expect((await t.app.inject({ method: 'POST', url })).statusCode).toBe(200);

    const before = rawFor(to).length;
    const next = await v1('POST', '/mail/broadcast', a.live, { from, to: [to], subject: 'More', text: 'z' });
    expect(await deliverEmail(t.deps, next.emails[0].id)).toBe('failed');
    expect(await v1('GET', `/mail/emails/${next.emails[0].id}`, a.live)).toMatchObject({
      status: 'failed',
      failureReason: 'suppressed',
    });
    expect(rawFor(to).length).toBe(before);

    // Another organization's list is its own: its mail to the same address still goes out.
    expect(await list(b.live)).toEqual([]);
    const other = await v1('POST', '/mail/send', b.live, { from, to, subject: 'Other org', text: 'z' });
    expect(await deliverEmail(t.deps, other.id)).toBe('sent');
  });

  it('refuses a tampered, truncated or unsigned token with 404 and suppresses nothing', async () => {
    const to = uniq('victim');
    const url = pathOf(unsubscribeUrlOf(await deliveredBroadcast(a.live, to)));
    const [id, sig] = url.split('/').at(-1)!.split('.');
    // Another broadcast e-mail of the same organization, its id under this signature.
    const other = await v1('POST', '/mail/broadcast', a.live, {
      from,
      to: [uniq('other')],
      subject: 'N',
      text: 'n',
    });
    const flipped = `${sig!.slice(0, -1)}${sig!.endsWith('A') ? 'B' : 'A'}`;
    const tokens = [
      `${other.emails[0].id}.${sig}`,
      `${id}.${flipped}`,
      id!,
      `${id}.${sig}.x`,
      `${id}.${sig!.slice(1)}`,
      `${id!.toUpperCase()}.${sig}`,
      'x',
    ];
    for (const token of tokens) {
      for (const method of ['GET', 'POST'] as const) {
        const r = await t.app.inject({ method, url: `/mail/unsubscribe/${token}` });
        expect(r.statusCode, `${method} ${token}`).toBe(404);
        expect(r.json().error.code).toBe('UNSUBSCRIBE_TOKEN_INVALID');
      }
    }
    const items = (await v1('GET', '/mail/suppressions', a.live)).items as { address: string }[];
    expect(items.map((s) => s.address)).not.toContain(other.emails[0].to[0]);
    expect(items.map((s) => s.address)).not.toContain(to);
  });
});

describe('MIME parts and headers', () => {
  it('gives HTML-only mail a text part generated from its HTML (multipart/alternative)', async () => {
    const to = uniq('html');
    const sent = await v1('POST', '/mail/send', a.live, {
      from,
      to,
      subject: 'Grüße aus Zürich',
      html: '<h1>Order shipped</h1><p>Track it <a href="https://acme.test/t/1">here</a>.</p><img src="cid:x">',
    });
    expect(await deliverEmail(t.deps, sent.id)).toBe('sent');
    const raw = rawFor(to)[0]!;
    expect(header(raw, 'Content-Type')).toMatch(/^multipart\/alternative/);
    expect(header(raw, 'Subject')).toMatch(/^=\?UTF-8\?/);
    expect(header(raw, 'Date')).toBeTruthy();
    expect(header(raw, 'Message-ID')).toBe(`<${sent.id}@acme.test>`);
    const parsed = await simpleParser(raw);
    expect(parsed.subject).toBe('Grüße aus Zürich');
    expect(parsed.html).toContain('<h1>Order shipped</h1>');
    expect(parsed.text).toMatch(/ORDER SHIPPED/);
    expect(parsed.text).toContain('here [https://acme.test/t/1]');
    expect(parsed.text).not.toContain('<');
  });

  it('keeps the sender’s own text part, and gives a subject-only message an empty text part', async () => {
    const both = uniq('both');
    const s1 = await v1('POST', '/mail/send', a.live, {
      from,
      to: both,
      subject: 'B',
      html: '<p>H</p>',
      text: 'Mine',
    });
    const only = uniq('subject-only');
    const s2 = await v1('POST', '/mail/send', a.live, { from, to: only, subject: 'Only a subject' });
    expect(await deliverEmail(t.deps, s1.id)).toBe('sent');
    expect(await deliverEmail(t.deps, s2.id)).toBe('sent');
    expect((await simpleParser(rawFor(both)[0]!)).text?.trim()).toBe('Mine');
    const raw = rawFor(only)[0]!;
    expect(header(raw, 'Content-Type')).toMatch(/^text\/plain/);
    expect((await simpleParser(raw)).text ?? '').toBe('');
  });
});
