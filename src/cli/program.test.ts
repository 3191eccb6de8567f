import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
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

describe('pier program', () => {
  it('prints help and the version with status 0', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    for (const c of ['login', 'logout', 'whoami', 'orgs', 'projects', 'project', 'secrets', 'admin'])
      expect(help.stdout).toMatch(new RegExp(`\\n  ${c}\\b`));
    expect(await run(['--version'])).toMatchObject({ code: 0, stdout: '0.1.0\n' });
    expect((await run([])).code).toBe(0);
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

  it('fails with NOT_LOGGED_IN when there is no token, and NETWORK_ERROR when the server is away', async () => {
    const nobody = await run(['whoami'], { PIER_URL: 'http://127.0.0.1:9' });
    expect(nobody).toMatchObject({ code: 1, stdout: '' });
    expect(nobody.stderr).toBe(
      "error NOT_LOGGED_IN: Not logged in to http://127.0.0.1:9; run 'pier login' or set PIER_TOKEN.\n",
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
