import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectSecretEnv } from '../../src/areas/orgs/secrets.ts';
import { type TestApp, testApp, uniq } from '../harness.ts';
import { seedOperator, seedOrg, seedProject, seedUser } from '../seed.ts';
import {
  BIN,
  FAKE_BROWSER,
  json,
  NODE24,
  pier,
  pierOnTty,
  removeScratchHomes,
  runProcess,
  scratchHome,
} from './cli-helpers.ts';

// The `pier` CLI driven end to end: a real server on a real port, the CLI as a child process.

let t: TestApp;
let url: string;
let operatorKey: string;

beforeAll(async () => {
  t = await testApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  operatorKey = (await seedOperator(t.deps)).token;
});
afterAll(async () => {
  removeScratchHomes();
  await t?.close();
});

type Saved = { url?: string; token?: string; user?: { email: string } };
type Step = { step: string; status?: number; body?: string; path?: string; params?: Record<string, string> };
async function logLines(file: string, n: number): Promise<Step[]> {
  for (let i = 0; ; i++) {
    const lines = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n') : [];
    if (lines.length >= n || i > 100) return lines.filter(Boolean).map((l) => JSON.parse(l) as Step);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const readConfig = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8')) as Saved;

describe('pier CLI against a running server', () => {
  it('logs in with a code, reads and writes, then logs out', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const home = scratchHome();
    const run = (args: string[], stdin?: string, env?: Record<string, string>) =>
      pier(args, { url, home, stdin, env });

    const minted = json<{ code: string; expiresAt: string }>(
      await run(['admin', 'login-code', 'create', '--email', owner.user.email, '--json'], undefined, {
        PIER_OPERATOR_KEY: operatorKey,
      }),
    );
    expect(minted.code).toMatch(/^[A-Z]{4}-[A-Z]{4}$/);

    const login = await run(['login', '--code'], `${minted.code.toLowerCase()}\n`);
    expect(login.code).toBe(0);
    expect(login.stdout).toContain(`Logged in to ${url} as ${owner.user.email}`);
    const saved = readConfig(home.configFile);
    expect(saved).toMatchObject({ url, user: { email: owner.user.email } });
    expect(saved.token).toMatch(/^pk\./);
    expect(login.stdout + login.stderr).not.toContain(saved.token);
    expect(fs.statSync(home.configFile).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(home.configFile)).mode & 0o777).toBe(0o700);

    const me = json<{ user: { email: string } }>(await run(['whoami', '--json']));
    expect(me.user.email).toBe(owner.user.email);
    expect(json(await run(['orgs', '--json']))).toEqual([
      { id: org.id, slug: org.slug, name: org.name, role: 'owner' },
    ]);

    const slug = uniq('cli');
    const created = json<{ id: string; slug: string; status: string }>(
      await run(['projects', 'create', '--org', org.slug, '--slug', slug, '--name', 'CLI app', '--json']),
    );
    expect(created).toMatchObject({ slug, orgId: org.id, status: 'ready' });
    const table = await run(['projects']);
    expect(table.stdout.split('\n')[0]).toMatch(/^ORG\s+SLUG\s+NAME$/);
    expect(table.stdout).toMatch(new RegExp(`${org.slug}\\s+${slug}\\s+CLI app`));
    expect(json(await run(['project', slug, '--json']))).toEqual({
      ...created,
      appLimits: { plan: 'free', memoryMb: 512, pids: 128, openFiles: 1024, diskMb: 1024, cpuPercent: 50 },
    });
    expect((await run(['project', slug])).stdout).toMatch(
      /app limits:\s+free plan: memory 512 MB, 128 processes\/threads, CPU 0.5 core, 1024 open files, 1024 MB disk \(\/data, and the largest file\)/,
    );

    const value = 'v3ry-s3cret-value';
    const set = await run(['secrets', 'set', 'API_TOKEN', '--project', slug], `${value}\n`);
    expect(set.code).toBe(0);
    expect(set.stdout).toBe(`Set API_TOKEN on ${slug}.\n`);
    expect(set.stdout + set.stderr).not.toContain(value);
    expect(await projectSecretEnv(t.deps, created.id)).toEqual({ API_TOKEN: value });
    const list = json<{ key: string; updatedAt: string }[]>(
      await run(['secrets', 'list', '--project', slug, '--json']),
    );
    expect(list.map((s) => s.key)).toEqual(['API_TOKEN']);
    expect(JSON.stringify(list)).not.toContain(value);
    expect(json(await run(['secrets', 'rm', 'API_TOKEN', '--project', slug, '--json']))).toMatchObject({
      key: 'API_TOKEN',
      removed: true,
    });
    expect(await projectSecretEnv(t.deps, created.id)).toEqual({});

    const refused = await run(['secrets', 'set', 'PORT', '8080', '--project', slug]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error PROTECTED_KEY: .+\n$/);
    const missing = await run(['project', 'no-such-project']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe("error PROJECT_NOT_FOUND: Project 'no-such-project' was not found.\n");

    const logout = await run(['logout']);
    expect(logout.code).toBe(0);
    expect(readConfig(home.configFile).token).toBeUndefined();
    expect((await t.call('whoamiForCli', {}, saved.token)).statusCode).toBe(401);
    const after = await run(['whoami']);
    expect(after.code).toBe(1);
    expect(after.stderr).toMatch(/^error NOT_LOGGED_IN: /);
    const revoked = await run(['whoami'], undefined, { PIER_TOKEN: saved.token! });
    expect(revoked.code).toBe(1);
    expect(revoked.stderr).toMatch(/^error AUTH_REQUIRED: /);
  }, 60_000); // a dozen CLI processes; on a loaded machine each takes seconds

  it('logs in through the browser flow: PKCE challenge, state check and loopback callback', async () => {
    const person = await seedUser(t.deps);
    const home = scratchHome();
    const log = path.join(home.home, 'browser.log');
    const env = {
      PIER_BROWSER: `"${NODE24}" "${FAKE_BROWSER}"`,
      FAKE_BROWSER_TOKEN: person.token,
      FAKE_BROWSER_LOG: log,
    };
    const login = await pier(['login', '--json'], { url, home, env });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain(`${url}/cli/login?`);
    expect(json(login)).toMatchObject({
      url,
      user: { email: person.user.email },
      label: `cli ${os.hostname()}`,
    });

    // The browser is the CLI's detached child and may finish its log just after the CLI exits.
    const [open, forged, callback] = await logLines(log, 3);
    expect(open?.path).toBe('/cli/login');
    expect(open?.params?.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(open?.params?.device).toBe(os.hostname());
    expect(open?.params?.callback).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(forged).toEqual({ step: 'forged', status: 400 });
    expect(callback).toMatchObject({ step: 'callback', status: 200 });
    expect(callback?.body).toContain('You can close this tab');

    const saved = readConfig(home.configFile);
    const me = await t.call('whoamiForCli', {}, saved.token);
    expect(me.json()).toMatchObject({
      user: { email: person.user.email },
      token: { label: `cli ${os.hostname()}` },
    });

    const denied = await pier(['login'], {
      url,
      home: scratchHome(),
      env: { ...env, FAKE_BROWSER_MODE: 'deny' },
    });
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(/\nerror LOGIN_DENIED: .*access_denied/);
  });

  it('runs every admin command with PIER_OPERATOR_KEY and prints JSON with --json', async () => {
    const home = scratchHome();
    const admin = (args: string[]) =>
      pier(['admin', ...args, '--json'], { url, home, env: { PIER_OPERATOR_KEY: operatorKey } });
    const email = `${uniq('op')}@example.com`;
    const slug = uniq('org');

    expect(json(await admin(['user', 'create', '--email', email]))).toMatchObject({ email, created: true });
    const org = json<{ slug: string; plan: string; owner: { email: string } }>(
      await admin(['org', 'create', '--slug', slug, '--name', 'Op Org', '--owner', email]),
    );
    expect(org).toMatchObject({ slug, plan: 'free', owner: { email } });
    const member = `${uniq('m')}@example.com`;
    expect(json(await admin(['member', 'add', '--org', slug, '--email', member, '--role', 'admin']))).toEqual(
      {
        orgSlug: slug,
        email: member,
        role: 'admin',
      },
    );
    expect(json(await admin(['plan', 'set', '--org', slug, '--plan', 'pro']))).toEqual({
      orgSlug: slug,
      plan: 'pro',
    });
    const code = json<{ code: string; expiresAt: string }>(
      await admin(['login-code', 'create', '--email', member, '--label', 'laptop']),
    );
    expect(Object.keys(code).sort()).toEqual(['code', 'expiresAt']);
    expect((await t.call('exchangeCliAuthCode', { code: code.code })).json()).toMatchObject({
      label: 'laptop',
      user: { email: member },
    });

    const cred = json<{ credential: string; keyId: string; scopes: string[] }>(
      await admin([
        'platform-credential',
        'create',
        '--scopes',
        'project.create,org.create',
        '--label',
        'partner',
      ]),
    );
    expect(cred.scopes).toEqual(['org.create', 'project.create']);
    expect(cred.credential).toMatch(new RegExp(`^plat\\.${cred.keyId}\\.`));
    const partnerCall = () =>
      t.call('createOrganization', { email: `${uniq('c')}@example.com`, name: 'Customer' }, cred.credential);
    expect((await partnerCall()).statusCode).toBe(200);
    expect(json(await admin(['platform-credential', 'revoke', '--key-id', cred.keyId]))).toEqual({
      ok: true,
      keyId: cred.keyId,
    });
    expect((await partnerCall()).statusCode).toBe(401);

    const badRole = await admin(['member', 'add', '--org', slug, '--email', member, '--role', 'king']);
    expect(badRole.code).toBe(2);
    expect(badRole.stderr).toMatch(/^error USAGE: .*king/);
    const unknownOrg = await admin(['plan', 'set', '--org', 'no-such-org', '--plan', 'pro']);
    expect(unknownOrg.code).toBe(1);
    expect(unknownOrg.stderr).toMatch(/^error ORG_NOT_FOUND: /);
  });

  it('reads the operator key from $DATA_DIR/operator.key, and says so when there is none', async () => {
    const home = scratchHome();
    const email = `${uniq('f')}@example.com`;
    const none = await pier(['admin', 'user', 'create', '--email', email], { url, home });
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^error OPERATOR_KEY_MISSING: .*operator\.key/);

    fs.mkdirSync(home.dataDir, { recursive: true });
    fs.writeFileSync(path.join(home.dataDir, 'operator.key'), `${operatorKey}\n`, { mode: 0o600 });
    const made = await pier(['admin', 'user', 'create', '--email', email, '--json'], { url, home });
    expect(json(made)).toMatchObject({ email, created: true });
  });

  const hasScript = (() => {
    try {
      execFileSync('script', ['--version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();
  it.skipIf(!hasScript)('asks for a secret on a terminal with echo off', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const project = await seedProject(t.deps, org);
    const home = scratchHome();
    const value = 'typed-s3cret';
    const res = await pierOnTty(
      ['secrets', 'set', 'TYPED_KEY', '--project', project.slug],
      { url, home, env: { PIER_TOKEN: owner.token } },
      { after: 'Value for TYPED_KEY (not shown): ', text: `${value}\r` },
    );
    expect(res.code, res.stdout).toBe(0);
    expect(res.stdout).toContain(`Set TYPED_KEY on ${project.slug}.`);
    expect(res.stdout).not.toContain(value);
    expect(await projectSecretEnv(t.deps, project.id)).toEqual({ TYPED_KEY: value });
  });

  // bin/pier.js on the machine's older Node re-runs itself with the package's Node 24.
  const oldNode = ['/usr/bin/node', '/usr/local/bin/node'].find((p) => {
    try {
      const v = execFileSync(p, ['--version'], { encoding: 'utf8' }).trim();
      return Number(/^v(\d+)/.exec(v)?.[1]) < 22;
    } catch {
      return false;
    }
  });
  it.skipIf(!oldNode)(
    'bin/pier.js re-executes itself with Node 24 when its Node cannot strip types',
    async () => {
      const person = await seedUser(t.deps);
      const home = scratchHome();
      const res = await runProcess(oldNode!, [BIN, 'whoami', '--json'], {
        env: { PATH: '/usr/bin:/bin', HOME: home.home, PIER_URL: url, PIER_TOKEN: person.token },
      });
      expect(json(res)).toMatchObject({ user: { email: person.user.email } });
    },
  );
});
