import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectCgroups } from './cgroups.ts';
import { type AppProcess, spawnApp, waitHealthy } from './local-driver.ts';
import { hostUid, isRoot, type SandboxLimits, sandboxProblem } from './sandbox.ts';
import { sandboxProcesses } from './sandboxed-spawn.ts';

// The sandbox's guarantees, each tried from inside a real app (docs/decisions/035-sandbox-hosted-apps.md): a hostile
// app reports what it could reach, and every attempt must have failed.

const LIMITS: SandboxLimits = { memoryMb: 256, pids: 64, openFiles: 512, diskMb: 64, cpuPercent: 100 };
let root: string;
let dataDir: string;
const procs: AppProcess[] = [];

/** What the hostile app tries; each entry is the outcome of one attempt ("ok …" or the error code). */
const PROBE = String.raw`
const fs = require('node:fs');
const net = require('node:net');
const env = JSON.parse(process.env.PROBE);
const tryIt = (f) => { try { const r = f(); return 'ok ' + String(r).slice(0, 80); } catch (e) { return e.code || e.message; } };
const probe = () => ({
  secretKey: tryIt(() => fs.readFileSync(env.dataDir + '/secret.key', 'utf8')),
  operatorKey: tryIt(() => fs.readFileSync(env.dataDir + '/operator.key', 'utf8')),
  dataDirListing: tryIt(() => fs.readdirSync(env.dataDir).join()),
  otherApp: tryIt(() => fs.readFileSync(env.otherFile, 'utf8')),
  otherAppData: tryIt(() => fs.readdirSync(env.otherData).join()),
  pierEnviron: tryIt(() => fs.readFileSync('/proc/' + env.pierPid + '/environ', 'utf8')),
  signalPier: tryIt(() => process.kill(env.pierPid, 0)),
  processes: fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).join(),
  pierEnvVar: process.env.PIER_SANDBOX_TEST_SECRET ?? 'absent',
  initEnviron: tryIt(() => fs.readFileSync('/proc/1/environ', 'utf8').includes('PIER_SANDBOX_TEST_SECRET')),
  writeRelease: tryIt(() => fs.writeFileSync('/app/x', 'x')),
  writeEtc: tryIt(() => fs.writeFileSync('/etc/x', 'x')),
  writeUsr: tryIt(() => fs.writeFileSync('/usr/x', 'x')),
  writeNode: tryIt(() => fs.writeFileSync(process.execPath, 'x')),
  writeRoot: tryIt(() => fs.writeFileSync('/x', 'x')),
  writeData: tryIt(() => fs.writeFileSync(process.env.PIER_APP_DATA + '/x', 'x')),
  writeTmp: tryIt(() => fs.writeFileSync('/tmp/x', 'x')),
  uid: process.getuid(),
  rootEntries: fs.readdirSync('/').sort().join(),
  etcEntries: fs.readdirSync('/etc').sort().join(),
  passwd: tryIt(() => require('node:os').userInfo().username),
  fds: fs.readdirSync('/proc/self/fd').map((fd) => tryIt(() => fs.readlinkSync('/proc/self/fd/' + fd))).join('|'),
});
require('node:http').createServer((req, res) => {
  if (req.url === '/probe') return res.end(JSON.stringify(probe()));
  res.end('ok');
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

function release(name: string, files: Record<string, string>): string {
  const dir = path.join(dataDir, 'apps', name, 'releases', 'r1');
  fs.mkdirSync(dir, { recursive: true });
  for (const [f, body] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), body);
  return dir;
}

async function start(
  projectId: string,
  dir: string,
  start: string,
  env: Record<string, string>,
  handoff = true,
) {
  const lines: string[] = [];
  const proc = await spawnApp({
    cwd: dir,
    start,
    env,
    handoff,
    onLine: (s, l) => lines.push(`${s}: ${l}`),
    sandbox: {
      projectId,
      dataDir: path.join(dataDir, 'apps', projectId, 'data'),
      limits: LIMITS,
      cgroups: detectCgroups(),
    },
  });
  procs.push(proc);
  return { proc, lines };
}

async function get(port: number, p: string): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}${p}`);
  return res.text();
}

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-sandbox-'));
  dataDir = path.join(root, 'data');
  fs.mkdirSync(dataDir, { mode: 0o700 });
  fs.writeFileSync(path.join(dataDir, 'secret.key'), 'MASTER', { mode: 0o600 });
  fs.writeFileSync(path.join(dataDir, 'operator.key'), 'OPERATOR', { mode: 0o600 });
  release('other', { 'secret.txt': 'OTHER APP' });
  fs.mkdirSync(path.join(dataDir, 'apps', 'other', 'data'), { recursive: true });
  process.env.PIER_SANDBOX_TEST_SECRET = 'pier-only';
});

afterAll(async () => {
  delete process.env.PIER_SANDBOX_TEST_SECRET;
  await Promise.all(procs.map((p) => p.stop(500)));
  fs.rmSync(root, { recursive: true, force: true });
});

describe('the app sandbox', () => {
  it('can be set up on this machine', () => {
    expect(sandboxProblem(path.join(root, 'check'))).toBeNull();
  });

  it('says how to install bubblewrap when it is missing (the hosting role then refuses to start)', () => {
    expect(sandboxProblem(path.join(root, 'check'), '/nonexistent/bwrap')).toMatch(
      /bubblewrap is not installed \(apt-get install bubblewrap\), or set APP_SANDBOX=off/,
    );
  });

  for (const handoff of [true, false])
    it(`keeps a hostile app away from Pier and other apps (${handoff ? 'node + hand-off shim' : 'sh -c'})`, async () => {
      const dir = release('hostile', { 'server.js': PROBE });
      const { proc, lines } = await start(
        'hostile',
        dir,
        handoff ? 'node server.js' : 'node server.js && true',
        {
          PROBE: JSON.stringify({
            dataDir,
            otherFile: path.join(dataDir, 'apps', 'other', 'releases', 'r1', 'secret.txt'),
            otherData: path.join(dataDir, 'apps', 'other', 'data'),
            pierPid: process.pid,
          }),
        },
        handoff,
      );
      const health = await waitHealthy(proc, '/', 15_000);
      expect(health, lines.join('\n')).toEqual({ ok: true });
      expect(proc.ipc).toBe(handoff);
      const r = JSON.parse(await get(proc.port, '/probe'));
      expect(r.secretKey).toBe('ENOENT');
      expect(r.operatorKey).toBe('ENOENT');
      expect(r.dataDirListing).toBe('ENOENT');
      expect(r.otherApp).toBe('ENOENT');
      expect(r.otherAppData).toBe('ENOENT');
      expect(r.pierEnviron).toBe('ENOENT');
      expect(r.signalPier).toBe('ESRCH');
      // Its own PID namespace: bwrap's pid 1, the app (and sh when it started one).
      expect(r.processes.split(',').every((p: string) => Number(p) <= 3)).toBe(true);
      expect(r.pierEnvVar).toBe('absent');
      expect(r.initEnviron).toBe('ok false');
      for (const w of ['writeRelease', 'writeEtc', 'writeUsr', 'writeNode', 'writeRoot'])
        expect(['EROFS', 'EACCES', 'EPERM'], w).toContain(r[w]);
      expect(r.writeData).toBe('ok undefined');
      expect(r.writeTmp).toBe('ok undefined');
      expect(r.uid).toBe(1000);
      expect(r.rootEntries).toBe('app,bin,data,dev,etc,lib,lib64,opt,proc,sbin,tmp,usr');
      expect(r.etcEntries.split(',')).not.toContain('shadow');
      expect(r.etcEntries.split(',')).not.toContain('postgresql');
      expect(r.passwd).toBe('ok app');
      // No open file of Pier's leaks in (a directory fd from outside would let it climb out with openat).
      expect(r.fds).not.toContain(root);
      // Outside, the app never runs as root.
      const init = await new Promise<number>((resolve) => {
        const tick = () => {
          // Only this app's own processes: other files (and other suites on the machine) run sandboxes too.
          const mine = new Set([proc.pid, ...sandboxProcesses(proc.pid)].map(String));
          const pids = fs
            .readdirSync('/proc')
            .filter((p) => /^\d+$/.test(p) && mine.has(p))
            .filter((p) => {
              try {
                return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('--info-fd');
              } catch {
                return false;
              }
            });
          const kids = pids.flatMap((p) => sandboxProcesses(Number(p)));
          if (kids.length) resolve(kids[0]);
          else setTimeout(tick, 20);
        };
        tick();
      });
      const uidLine = fs.readFileSync(`/proc/${init}/status`, 'utf8').match(/^Uid:\s+(\d+)/m)![1];
      expect(Number(uidLine)).not.toBe(0);
      if (isRoot()) expect(Number(uidLine)).toBe(hostUid('hostile'));
      expect(fs.readFileSync(path.join(dataDir, 'apps', 'hostile', 'data', 'x'), 'utf8')).toBe('x');
      await proc.stop(2000);
    });

  it('stops an app gracefully: SIGTERM reaches the app inside', async () => {
    const dir = release('graceful', {
      'server.js':
        "const s = require('node:http').createServer((q, r) => r.end('ok')).listen(Number(process.env.PORT), '127.0.0.1');" +
        "process.on('SIGTERM', () => { require('node:fs').writeFileSync(process.env.PIER_APP_DATA + '/term', 'yes'); process.exit(0); });",
    });
    const { proc } = await start('graceful', dir, 'node server.js', {});
    expect(await waitHealthy(proc, '/', 15_000)).toEqual({ ok: true });
    const t0 = Date.now();
    await proc.stop(5000);
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(fs.readFileSync(path.join(dataDir, 'apps', 'graceful', 'data', 'term'), 'utf8')).toBe('yes');
  });

  it.skipIf(detectCgroups().kind !== 'v1')(
    'kills an app over its memory limit and says "out of memory"',
    async () => {
      const dir = release('hungry', {
        'server.js':
          "require('node:http').createServer((q, r) => { if (q.url !== '/eat') return r.end('ok'); const keep = []; for (;;) keep.push(Buffer.alloc(8 << 20, 1)); })" +
          ".listen(Number(process.env.PORT), '127.0.0.1');",
      });
      const { proc, lines } = await start('hungry', dir, 'node server.js', {});
      expect(await waitHealthy(proc, '/', 15_000)).toEqual({ ok: true });
      void get(proc.port, '/eat').catch(() => {});
      const exit = await proc.exited;
      expect(exit.oom).toBe(true);
      expect(exit.signal).toBe('SIGKILL');
      expect(lines.join('\n')).toMatch(/ran out of memory \(limit 256 MB\)/);
    },
    30_000,
  );
});

describe('Pier killed with SIGKILL', () => {
  it('leaves no app process behind (checked by PID within 5 s)', async () => {
    const marker = `pier-orphan-check-${process.pid}-${Date.now()}`;
    const dir = release('orphan', {
      'server.js':
        "require('node:http').createServer((q, r) => r.end('ok')).listen(Number(process.env.PORT), '127.0.0.1');",
    });
    const host = path.join(root, 'host.ts');
    const driver = fileURLToPath(new URL('./local-driver.ts', import.meta.url));
    const cg = fileURLToPath(new URL('./cgroups.ts', import.meta.url));
    fs.writeFileSync(
      host,
      `import { spawnApp, waitHealthy } from ${JSON.stringify(driver)};\n` +
        `import { detectCgroups } from ${JSON.stringify(cg)};\n` +
        `const proc = await spawnApp({ cwd: ${JSON.stringify(dir)}, start: 'node server.js ${marker}', env: {}, handoff: true, onLine: () => {},\n` +
        `  sandbox: { projectId: 'orphan', dataDir: ${JSON.stringify(path.join(dataDir, 'apps', 'orphan', 'data'))}, limits: ${JSON.stringify(LIMITS)}, cgroups: detectCgroups() } });\n` +
        `const h = await waitHealthy(proc, '/', 15000); console.log(JSON.stringify(h)); setInterval(() => {}, 1000);\n`,
    );
    const pier = spawn(process.execPath, [host], { stdio: ['ignore', 'pipe', 'inherit'] });
    const first = await new Promise<string>((resolve) => pier.stdout.once('data', (d) => resolve(String(d))));
    expect(JSON.parse(first)).toEqual({ ok: true });
    const appPids = () =>
      fs
        .readdirSync('/proc')
        .filter((p) => /^\d+$/.test(p))
        .filter((p) => {
          try {
            return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(marker);
          } catch {
            return false;
          }
        });
    const before = appPids();
    expect(before.length).toBeGreaterThan(0);
    pier.kill('SIGKILL');
    const deadline = Date.now() + 5000;
    while (appPids().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(appPids()).toEqual([]);
  }, 30_000);
});
