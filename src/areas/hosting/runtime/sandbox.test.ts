import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../../test/harness.ts';
import {
  CONNECT_TO,
  DNS_NAME,
  hostDnsAnswer,
  hostHasDns,
  listen,
  outwardAddress,
  portOf,
} from '../../../../test/sandbox-probe.ts';
import { seedOrg, seedProject } from '../../../../test/seed.ts';
import { AppDbServers, projectRunDir, provisionAppDatabase } from './app-databases.ts';
import { detectCgroups } from './cgroups.ts';
import { type AppProcess, appAddress, spawnApp, waitHealthy } from './local-driver.ts';
import { ipBinary } from './netns-routes.ts';
import { hostUid, isRoot, type SandboxLimits, sandboxProblem } from './sandbox.ts';

// The sandbox's guarantees, each tried from inside a real app (docs/decisions/035-sandbox-hosted-apps.md): a hostile
// app reports what it could reach, and every attempt must have failed. Its network (decision 066) and its
// database socket (decision 067) are tried on the database this run uses (PGlite, or PostgreSQL with
// TEST_DATABASE_URL): the hostile app is project A's, with A's DATABASE_URL; B is another project.

const LIMITS: SandboxLimits = { memoryMb: 256, pids: 64, openFiles: 512, diskMb: 64, cpuPercent: 100 };
let root: string;
let dataDir: string;
const procs: AppProcess[] = [];
let t: TestApp;
let dbs: AppDbServers;
/** Stand-ins for Pier's own port (loopback) and a public service on the host's outward address. */
let pierServer: http.Server;
let publicServer: http.Server;
let hostDns: string;

/** What the hostile app tries; each entry is the outcome of one attempt ("ok …" or the error code). */
const PROBE = String.raw`
const fs = require('node:fs');
const net = require('node:net');
const env = JSON.parse(process.env.PROBE);
const tryIt = (f) => { try { const r = f(); return 'ok ' + String(r).slice(0, 80); } catch (e) { return e.code || e.message; } };
${CONNECT_TO}
// A connect that must fail at once: the outcome and whether it took under a second.
const timed = async (opts) => { const t0 = Date.now(); const r = await connectTo(opts); return r + (Date.now() - t0 < 1000 ? ' fast' : ' slow'); };
// iproute2 speaks netlink: the app trying to change its own namespace's routes.
const ipCmd = (args) => { const r = require('node:child_process').spawnSync(env.ip, args, { encoding: 'utf8' }); return r.status === 0 ? 'ok ' + r.stdout.trim() : 'failed ' + r.stderr.trim(); };
// A Postgres log-in by hand (no driver in the sandbox): start-up message, then the password when asked.
const pgLogin = (opts, user, database, password) => new Promise((resolve) => {
  const s = require('node:net').connect(opts);
  let buf = Buffer.alloc(0);
  const done = (r) => { clearTimeout(timer); s.destroy(); resolve(r); };
  const timer = setTimeout(() => done('timeout'), 5000);
  s.on('error', (e) => done(e.code || e.message));
  s.on('connect', () => {
    const body = Buffer.from('user\0' + user + '\0database\0' + database + '\0\0');
    const h = Buffer.alloc(8); h.writeInt32BE(body.length + 8); h.writeInt32BE(196608, 4);
    s.write(Buffer.concat([h, body]));
  });
  s.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 5) {
      const type = String.fromCharCode(buf[0]); const len = buf.readInt32BE(1);
      if (buf.length < len + 1) return;
      const msg = buf.subarray(5, len + 1); buf = buf.subarray(len + 1);
      if (type === 'E') return done('error ' + (/C([0-9A-Z]{5})/.exec(msg.toString('latin1')) || [])[1]);
      if (type !== 'R') continue;
      const code = msg.readInt32BE(0);
      if (code === 0) return done('ok authenticated');
      const p = Buffer.from(password + '\0'); const ph = Buffer.alloc(5); ph.write('p'); ph.writeInt32BE(p.length + 4, 1);
      s.write(Buffer.concat([ph, p]));
    }
  });
});
const netProbe = async () => {
  const own = new URL(process.env.DATABASE_URL);
  const ownSocket = own.searchParams.get('host') + '/.s.PGSQL.5432';
  const ownDb = own.pathname.slice(1);
  const user = decodeURIComponent(own.username), pw = decodeURIComponent(own.password);
  const gw = '10.0.2.2';
  return {
    ownDb: await pgLogin({ path: ownSocket }, user, ownDb, pw),
    ownDbWrongPassword: await pgLogin({ path: ownSocket }, user, ownDb, 'guess'),
    otherDbNoPassword: await pgLogin({ path: ownSocket }, env.otherRole, env.otherDb, ''),
    otherDbWrongPassword: await pgLogin({ path: ownSocket }, env.otherRole, env.otherDb, 'guess'),
    otherDbOwnPassword: await pgLogin({ path: ownSocket }, user, env.otherDb, pw),
    otherDbSocket: await pgLogin({ path: env.otherDbSocket }, env.otherRole, env.otherDb, ''),
    postgresLoopback: await pgLogin({ host: '127.0.0.1', port: 5432 }, 'postgres', 'postgres', ''),
    postgresGateway: await pgLogin({ host: gw, port: 5432 }, 'postgres', 'postgres', ''),
    pierPort: await connectTo({ host: '127.0.0.1', port: env.pierPort }),
    pierPortGateway: await connectTo({ host: gw, port: env.pierPort }),
    neighbourPort: await connectTo({ host: '127.0.0.1', port: env.neighbourPort }),
    neighbourSocket: await connectTo({ path: env.neighbourSocket }),
    hostAddress: await timed({ host: env.publicHost, port: env.publicPort }),
    metadata: await timed({ host: '169.254.169.254', port: 80 }),
    privateRange: await timed({ host: '10.1.2.3', port: 80 }),
    ipv6: await timed({ host: env.publicHostV6, port: env.publicPort }),
    dns: await require('node:dns').promises.resolve4(env.dnsName).then((a) => a.sort().join(), (e) => e.code),
    routeDel: ipCmd(['route', 'del', 'unreachable', '169.254.0.0/16']),
    routeOpen: ipCmd(['route', 'replace', env.publicHost + '/32', 'via', '10.0.2.2', 'dev', 'tap0']),
    routes: ipCmd(['route', 'show']),
  };
};
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
  if (req.url === '/net') return void netProbe().then((r) => res.end(JSON.stringify(r)));
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
  runDir?: string,
  outboundAllow?: string[],
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
      runDir,
      limits: LIMITS,
      outboundAllow,
      cgroups: detectCgroups(),
    },
  });
  procs.push(proc);
  return { proc, lines };
}

/** GET from the app the way Pier's proxy reaches it (its Unix socket). */
function get(proc: AppProcess, p: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get({ ...appAddress(proc), path: p, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => {
          body += d;
        });
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
}

beforeAll(async () => {
  t = await testApp();
  dbs = new AppDbServers(t.deps);
  pierServer = await listen('127.0.0.1');
  publicServer = await listen('0.0.0.0');
  hostDns = await hostDnsAnswer();
  // initdb in WASM takes seconds on a busy machine: once here, not inside a test's time.
  if (!t.deps.config.databaseUrl) await dbs.template();
}, 120_000);

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
  await dbs?.closeAll();
  await t?.close();
  pierServer?.close();
  publicServer?.close();
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
      const { org } = await seedOrg(t.deps);
      const a = await seedProject(t.deps, org);
      const b = await seedProject(t.deps, org);
      await provisionAppDatabase(t.deps, a.id);
      await provisionAppDatabase(t.deps, b.id);
      const urlB = new URL(await dbs.urlFor(b.id));
      const neighbour = await start(
        b.id,
        release('neighbour', { 'server.js': PROBE }),
        'node server.js',
        { PROBE: '{}' },
        true,
        projectRunDir(t.deps, b.id),
      );
      expect(await waitHealthy(neighbour.proc, '/', 15_000)).toEqual({ ok: true });
      const dir = release('hostile', { 'server.js': PROBE });
      const { proc, lines } = await start(
        a.id,
        dir,
        handoff ? 'node server.js' : 'node server.js && true',
        {
          DATABASE_URL: await dbs.urlFor(a.id),
          PROBE: JSON.stringify({
            dataDir,
            otherFile: path.join(dataDir, 'apps', 'other', 'releases', 'r1', 'secret.txt'),
            otherData: path.join(dataDir, 'apps', 'other', 'data'),
            pierPid: process.pid,
            otherRole: decodeURIComponent(urlB.username),
            otherDb: urlB.pathname.slice(1),
            otherDbSocket: path.join(projectRunDir(t.deps, b.id), 'db', '.s.PGSQL.5432'),
            pierPort: portOf(pierServer),
            neighbourPort: neighbour.proc.port,
            neighbourSocket: neighbour.proc.socketPath,
            publicHost: outwardAddress(),
            publicPort: portOf(publicServer),
            publicHostV6: outwardAddress('IPv6'),
            dnsName: DNS_NAME,
            ip: ipBinary(),
          }),
        },
        handoff,
        projectRunDir(t.deps, a.id),
      );
      const health = await waitHealthy(proc, '/', 15_000);
      expect(health, lines.join('\n')).toEqual({ ok: true });
      expect(proc.ipc).toBe(handoff);
      const r = JSON.parse(await get(proc, '/probe'));
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
      expect(r.rootEntries).toBe('app,bin,data,dev,etc,lib,lib64,opt,proc,run,sbin,tmp,usr');
      expect(r.etcEntries.split(',')).not.toContain('shadow');
      expect(r.etcEntries.split(',')).not.toContain('postgresql');
      expect(r.passwd).toBe('ok app');
      // No open file of Pier's leaks in (a directory fd from outside would let it climb out with openat).
      expect(r.fds).not.toContain(root);
      // Outside, the app never runs as root.
      const [init] = await proc.hostPids();
      const uidLine = fs.readFileSync(`/proc/${init}/status`, 'utf8').match(/^Uid:\s+(\d+)/m)![1];
      expect(Number(uidLine)).not.toBe(0);
      if (isRoot()) expect(Number(uidLine)).toBe(hostUid(a.id));
      expect(fs.readFileSync(path.join(dataDir, 'apps', a.id, 'data', 'x'), 'utf8')).toBe('x');
      // Its network and databases (decisions 066, 067), each attempt on its own.
      const n = JSON.parse(await get(proc, '/net'));
      expect(n.ownDb).toBe('ok authenticated'); // the control: its own database, with its own password
      expect(n.ownDbWrongPassword).toBe('error 28P01');
      expect(n.otherDbNoPassword).toBe('error 28P01');
      expect(n.otherDbWrongPassword).toBe('error 28P01');
      expect(n.otherDbOwnPassword).toBe('error 3D000');
      expect(n.otherDbSocket).toBe('ENOENT');
      expect(n.postgresLoopback).toBe('ECONNREFUSED');
      expect(n.postgresGateway).not.toMatch(/^ok/);
      expect(n.pierPort).toBe('ECONNREFUSED');
      expect(n.pierPortGateway).not.toMatch(/^ok/);
      expect(n.neighbourPort).toBe('ECONNREFUSED');
      expect(n.neighbourSocket).toBe('ENOENT');
      // Private ranges and the host's own addresses (decision 082): refused at once inside the app's namespace.
      expect(n.hostAddress).toBe('EHOSTUNREACH fast');
      expect(n.metadata).toBe('EHOSTUNREACH fast');
      expect(n.privateRange).toBe('EHOSTUNREACH fast');
      // No IPv6 in the namespace at all (slirp4netns runs without --enable-ipv6).
      expect(n.ipv6).toBe('ENETUNREACH fast');
      // slirp's DNS forwarder still answers, as the host's resolver does.
      if (hostHasDns(hostDns)) expect(n.dns).toBe(hostDns);
      // The app cannot change its routes: no CAP_NET_ADMIN in its namespace.
      expect(n.routeDel).toMatch(/^failed .*Operation not permitted/);
      expect(n.routeOpen).toMatch(/^failed .*Operation not permitted/);
      expect(n.routes).toContain('unreachable 169.254.0.0/16');
      expect(n.routes).toContain(`unreachable ${outwardAddress()}`);
      await neighbour.proc.stop(2000);
      await proc.stop(2000);
    }, 60_000);

  it('reaches a private destination the operator opened with OUTBOUND_ALLOW, never the metadata address', async () => {
    const host = outwardAddress();
    const dir = release('allowed', {
      'server.js': `
const net = require('node:net');
${CONNECT_TO}
require('node:http').createServer(async (req, res) => {
  if (req.url !== '/net') return res.end('ok');
  res.end(JSON.stringify({
    opened: await connectTo({ host: process.env.TARGET, port: Number(process.env.TARGET_PORT) }),
    metadata: await connectTo({ host: '169.254.169.254', port: 80 }),
  }));
}).listen(Number(process.env.PORT), '127.0.0.1');`,
    });
    // 169.254.0.0/16 opened as a whole: the metadata address inside it stays closed (as for the SSRF guard).
    const { proc, lines } = await start(
      'allowed',
      dir,
      'node server.js',
      { TARGET: host, TARGET_PORT: String(portOf(publicServer)) },
      true,
      undefined,
      [`${host}/32`, '169.254.0.0/16'],
    );
    expect(await waitHealthy(proc, '/', 15_000), lines.join('\n')).toEqual({ ok: true });
    const n = JSON.parse(await get(proc, '/net'));
    expect(n.opened).toBe('ok connected');
    expect(n.metadata).toBe('EHOSTUNREACH');
    await proc.stop(2000);
  }, 30_000);

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
      void get(proc, '/eat').catch(() => {});
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
