import crypto from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifests } from '../src/areas/index.ts';
import { deliverEmail } from '../src/areas/mail/worker.ts';
import { type TestApp, testApp } from './harness.ts';
import { seedProject, seedV1Tenant } from './seed.ts';
import type { V1Tenant } from './v1-security.ts';

// Where Pier used to drift from the contracts (each case is spelled out here), as a
// client written to the letter of the REST and function-API contracts would notice.

let t: TestApp;
let a: V1Tenant;
beforeAll(async () => {
  t = await testApp({ queue: true });
  a = await seedV1Tenant(t.deps);
});
afterAll(async () => {
  await t?.close();
});

describe('an empty body sent as application/json is {}', () => {
  it('on every v1 POST and DELETE that takes no body', async () => {
    const bodiless = manifests()
      .flatMap((m) => m.v1 ?? [])
      .flatMap((area) =>
        area.routes
          .filter((r) => (r.method === 'POST' || r.method === 'DELETE') && !r.body)
          .map((r) => {
            const url = `${area.prefix}${r.url}`.replace(/:\w+/g, crypto.randomUUID());
            // Unified integration routes name their connection in the query; an unknown one is a 404 too.
            const unified = /^\/integrations\/(crm|storage|communication|productivity)\//.test(url);
            return { method: r.method, url: unified ? `${url}?connectionId=${crypto.randomUUID()}` : url };
          }),
      );
    // cancel, resend, compact and the deletes at least.
    expect(bodiless.length).toBeGreaterThanOrEqual(6);
    for (const r of bodiless) {
      const res = await t.v1(r.method as 'POST' | 'DELETE', r.url, a.live, '', {
        'content-type': 'application/json',
      });
      // An unknown id: the route ran and answered its own 404, not 400 "not valid JSON".
      expect(res.statusCode, `${r.method} ${r.url}: ${res.body}`).toBe(404);
      expect(res.json().error.code).not.toBe('VALIDATION_ERROR');
    }
  });

  it('deletes a real agent and compacts a real collection with an empty JSON body', async () => {
    const agent = (await t.v1('POST', '/memory/agents', a.live, { name: 'A' })).json();
    const del = await t.v1('DELETE', `/memory/agents/${agent.id}`, a.live, '', {
      'content-type': 'application/json',
    });
    expect(del.statusCode, del.body).toBe(200);
    expect(del.json()).toEqual({ success: true });
    const col = (await t.v1('POST', '/memory/collections', a.live, { name: 'C' })).json();
    const compact = await t.v1('POST', `/memory/collections/${col.id}/compact`, a.live, '', {
      'content-type': 'application/json',
    });
    expect(compact.statusCode, compact.body).toBeLessThan(300);
  });

  it('on function-API calls that take no input', async () => {
    const res = await t.call('listMyOrgsForCli', '', a.owner.token);
    expect(res.statusCode, res.body).toBe(200);
    // Malformed JSON is still a 400.
    const bad = await t.call('listMyOrgsForCli', '{', a.owner.token);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('VALIDATION_ERROR');
  });
});

describe('function-API error codes are the contract', () => {
  it('exchangeCliAuthCode: a long code is CODE_INVALID', async () => {
    const res = await t.call('exchangeCliAuthCode', { code: 'A'.repeat(200) });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('CODE_INVALID');
  });

  it('setSecretForCli and removeSecretForCli: a long key is INVALID_KEY', async () => {
    const project = await seedProject(t.deps, a.org);
    const key = `K${'A'.repeat(300)}`;
    const set = await t.call(
      'setSecretForCli',
      { projectSlug: project.slug, key, value: 'v' },
      a.owner.token,
    );
    expect(set.statusCode).toBe(400);
    expect(set.json().error.code).toBe('INVALID_KEY');
    const rm = await t.call('removeSecretForCli', { projectSlug: project.slug, key }, a.owner.token);
    expect(rm.statusCode).toBe(400);
    expect(rm.json().error.code).toBe('INVALID_KEY');
  });
});

describe('mail send', () => {
  it('accepts a subject-only message (html, text and templateId are optional) and delivers it', async () => {
    const res = await t.v1('POST', '/mail/send', a.live, {
      from: 'hello@acme.test',
      to: 'ada@example.com',
      subject: 'Just a subject',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ subject: 'Just a subject', html: null, text: null });
    expect(await deliverEmail(t.deps, res.json().id)).toBe('delivered');
  });
});

describe('shutdown', () => {
  it('answers a request that arrives while the node drains with 503 in the error envelope', async () => {
    const node = await testApp({ listen: true });
    const { port } = node.app.server.address() as net.AddressInfo;
    const sock = net.connect(port, '127.0.0.1');
    await new Promise<void>((r) => sock.once('connect', () => r()));
    let received = '';
    sock.on('data', (c) => {
      received += c;
    });
    const ended = new Promise<void>((r) => sock.once('close', () => r()));
    // A request in flight (its body still arriving) keeps the connection open through close()...
    sock.write(
      'POST /api/fn/listMyOrgsForCli HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{',
    );
    await new Promise((r) => setTimeout(r, 100));
    const closing = node.app.close();
    // Draining has begun once the server stops accepting connections (after the preClose hooks).
    for (let i = 0; i < 250 && node.app.server.listening; i++) await new Promise((r) => setTimeout(r, 20));
    expect(node.app.server.listening).toBe(false);
    // ...and the next one on the same connection arrives while the node drains.
    sock.write('}GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await ended;
    await closing;
    await node.close();
    const responses = received.split(/(?=HTTP\/1\.1 )/);
    expect(responses).toHaveLength(2);
    const last = responses[1]!;
    expect(last).toMatch(/^HTTP\/1\.1 503 /);
    expect(last.toLowerCase()).toContain('connection: close');
    const body = JSON.parse(last.slice(last.indexOf('\r\n\r\n') + 4));
    expect(body).toEqual({ error: { code: 'SHUTTING_DOWN', message: expect.any(String) } });
  });
});
