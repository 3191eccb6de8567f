import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../test/harness.ts';
import { seedOperator, seedOrg, seedProject } from '../../test/seed.ts';

// The JSON logs of real calls carrying credentials, codes and secret values contain none of them.

const lines: string[] = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    done();
  },
});

let t: TestApp;
beforeAll(async () => {
  t = await testApp({ logStream: sink });
});
afterAll(async () => {
  await t?.close();
});

describe('structured logs', () => {
  it('log one JSON line per request with its id, and never a credential or a secret value', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const project = await seedProject(t.deps, org);
    const op = (await seedOperator(t.deps)).token;
    const secretValue = 'sv-4f1c9e7a2b-never-log-me';
    const { code } = (await t.call('adminCreateLoginCode', { email: owner.user.email }, op)).json();
    const minted = (await t.call('exchangeCliAuthCode', { code })).json().token as string;
    const plat = (await t.call('adminCreatePlatformCredential', { scopes: ['org.create'] }, op)).json()
      .credential;
    await t.call(
      'setSecretForCli',
      { projectSlug: project.slug, key: 'LOGGED', value: secretValue },
      minted,
      { 'x-request-id': 'req-secret' },
    );
    await t.call(
      'setSecretForCli',
      { projectSlug: project.slug, key: 'bad key', value: secretValue },
      owner.token,
    );
    await t.call(
      'setSecretForCli',
      `{"projectSlug":"${project.slug}","value":"${secretValue}",`,
      owner.token,
    );
    await t.call('whoamiForCli', {}, `${minted}x`);
    await t.call('createOrganization', { email: 'c@example.com', name: 'C' }, plat);
    await t.call('exchangeCliAuthCode', { code });
    await t.app.inject({ url: `/api/fn/whoamiForCli?token=${owner.token}` });

    await new Promise((r) => setTimeout(r, 20));
    expect(lines.length).toBeGreaterThanOrEqual(10);
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const secretLine = records.find((r) => r.reqId === 'req-secret');
    expect(secretLine).toMatchObject({
      msg: 'request',
      method: 'POST',
      path: '/api/fn/setSecretForCli',
      status: 200,
    });
    // Exactly one access line per request, in pino's format, the query string (here a token) left out.
    const access = records.filter((r) => r.msg === 'request');
    expect(access).toHaveLength(10);
    for (const r of access) {
      expect(r).toMatchObject({ level: 30, pid: process.pid, method: expect.any(String) });
      expect(typeof r.time).toBe('number');
      expect(typeof r.reqId).toBe('string');
      expect(typeof r.ms).toBe('number');
    }
    expect(access.at(-1)).toMatchObject({ method: 'GET', path: '/api/fn/whoamiForCli', status: 405 });
    expect(new Set(access.map((r) => r.status))).toEqual(new Set([200, 400, 401, 405]));
    const all = lines.join('\n');
    const forbidden = [secretValue, owner.token, minted, plat, op, code, code.replace('-', '')];
    for (const f of forbidden) {
      expect(all.includes(f), `log holds ${f.slice(0, 12)}…`).toBe(false);
      expect(all.includes(f.split('.').pop()!), 'log holds a secret part').toBe(false);
    }
  });
});
