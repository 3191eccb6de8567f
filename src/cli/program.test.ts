import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCliEnv } from './env.ts';
import { runCli } from './program.ts';

// The program in-process, for what needs no server: usage errors, help, exit statuses, the error line.

function capture() {
  const out = { stdout: '', stderr: '' };
  const io = {
    stdin: Readable.from([]) as unknown as NodeJS.ReadableStream,
    stdout: { write: (s: string) => (out.stdout += s) },
    stderr: { write: (s: string) => (out.stderr += s) },
  };
  return { out, io };
}

async function run(argv: string[], env: Record<string, string> = {}) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-prog-'));
  const { out, io } = capture();
  const code = await runCli(argv, io, readCliEnv({ HOME: home, PIER_CONFIG_DIR: home, ...env }, 'linux'));
  return { code, ...out };
}

// A stand-in server that refuses every credential, as Pier does a revoked or foreign one.
let refusing: http.Server;
let refusingUrl = '';
beforeAll(async () => {
  refusing = http.createServer((req, res) => {
    if (req.url === '/healthz') return res.end('{"ok":true}');
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ error: { code: 'AUTH_REQUIRED', message: 'A valid bearer credential is required.' } }),
    );
  });
  await new Promise<void>((r) => refusing.listen(0, '127.0.0.1', r));
  refusingUrl = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => refusing.close(() => r())));

describe('pier program', () => {
  it('prints help and the version with status 0', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    for (const c of ['login', 'logout', 'whoami', 'orgs', 'projects', 'project', 'secrets', 'admin'])
      expect(help.stdout).toMatch(new RegExp(`\\n  ${c}\\b`));
    expect(await run(['--version'])).toMatchObject({ code: 0, stdout: '0.1.0\n' });
    expect((await run([])).code).toBe(0);
  });

  it('says which credential the server refused', async () => {
    const env = await run(['orgs'], { PIER_URL: refusingUrl, PIER_TOKEN: 'pk.bad.token' });
    expect(env.code).toBe(1);
    expect(env.stderr).toBe(
      `error AUTH_REQUIRED: ${refusingUrl} refused the token in PIER_TOKEN (revoked, expired, or not from this Pier): unset PIER_TOKEN to use your saved login, or set a valid personal token.\n`,
    );
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-prog-'));
    fs.writeFileSync(
      path.join(home, 'config.json'),
      JSON.stringify({ url: refusingUrl, token: 'pk.old.one' }),
    );
    const { out, io } = capture();
    const code = await runCli(['orgs'], io, readCliEnv({ HOME: home, PIER_CONFIG_DIR: home }, 'linux'));
    expect(code).toBe(1);
    expect(out.stderr).toContain(`refused the token 'pier login' saved in ${path.join(home, 'config.json')}`);
    expect(out.stderr).toContain("run 'pier login' again");
    const op = await run(['admin', 'mail'], { PIER_URL: refusingUrl, PIER_OPERATOR_KEY: 'op.x.y' });
    expect(op.stderr).toContain('refused the operator key in PIER_OPERATOR_KEY');
    // A reachable server without a token for it: still "not logged in".
    const none = await run(['whoami'], { PIER_URL: refusingUrl });
    expect(none.stderr).toMatch(/^error NOT_LOGGED_IN: /);
  });

  it('answers usage errors with one error USAGE line and status 2', async () => {
    const unknown = await run(['deploy-everything']);
    expect(unknown).toMatchObject({ code: 2, stdout: '' });
    expect(unknown.stderr).toMatch(/^error USAGE: unknown command 'deploy-everything'\n$/);
    const missing = await run(['projects', 'create', '--org', 'acme']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe("error USAGE: required option '--slug <slug>' not specified\n");
    const plan = await run(['admin', 'plan', 'set', '--org', 'acme', '--plan', 'gold']);
    expect(plan.code).toBe(2);
    expect((await run(['admin'])).code).toBe(2);
  });

  it('names the URL that did not answer, with or without a token', async () => {
    const nobody = await run(['whoami'], { PIER_URL: 'http://127.0.0.1:9' });
    expect(nobody).toMatchObject({ code: 1, stdout: '' });
    expect(nobody.stderr).toMatch(
      /^error NETWORK_ERROR: Could not reach Pier at http:\/\/127\.0\.0\.1:9 \(.+; PIER_URL\)\. Is it running\? You are not logged in there either/,
    );
    const away = await run(['orgs', '--json'], { PIER_URL: 'http://127.0.0.1:9', PIER_TOKEN: 'pk.x.y' });
    expect(away.code).toBe(1);
    expect(away.stderr).toMatch(/^error NETWORK_ERROR: Could not reach Pier at http:\/\/127\.0\.0\.1:9 \(/);
  });

  it('takes a login code from stdin and refuses an empty one as a usage error', async () => {
    const empty = await run(['login', '--code'], { PIER_URL: 'http://127.0.0.1:9' });
    expect(empty).toMatchObject({ code: 2, stderr: 'error USAGE: No login code given.\n' });
  });
});
