import { spawn } from 'node:child_process';
import fs from 'node:fs';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONNECT_TO,
  DNS_NAME,
  hostDnsAnswer,
  hostHasDns,
  listen,
  outwardAddress,
  portOf,
} from '../../../../test/sandbox-probe.ts';
import { ipBinary } from './netns-routes.ts';

// Pier NOT root (decision 091): each app still gets a network namespace of its own, made by unshare in a user
// namespace of Pier's uid. Tests run as root in CI, so a small "Pier" process loads the runtime, drops to
// nobody (65534) before it starts anything, runs the startup check and two apps, and reports what they reached.

const NOBODY = 65534;
let root: string;
let loopbackServer: http.Server;
let outwardServer: http.Server;
let hostDns: string;

const APP = `
const net = require('node:net');
const env = JSON.parse(process.env.PROBE);
${CONNECT_TO}
const ipCmd = (args) => { const r = require('node:child_process').spawnSync(env.ip, args, { encoding: 'utf8' }); return r.status === 0 ? 'ok ' + r.stdout.trim() : 'failed ' + r.stderr.trim(); };
require('node:http').createServer(async (req, res) => {
  if (!req.url.startsWith('/net')) return res.end('ok');
  const neighbourPort = Number(new URL(req.url, 'http://x').searchParams.get('neighbour'));
  res.end(JSON.stringify({
    uid: process.getuid(),
    allowed: await connectTo({ host: env.host, port: env.outwardPort }),
    loopback: await connectTo({ host: '127.0.0.1', port: env.loopbackPort }),
    postgres: await connectTo({ host: '127.0.0.1', port: 5432 }),
    neighbour: neighbourPort ? await connectTo({ host: '127.0.0.1', port: neighbourPort }) : 'none',
    privateRange: await connectTo({ host: '10.1.2.3', port: 80 }),
    metadata: await connectTo({ host: '169.254.169.254', port: 80 }),
    routeDel: ipCmd(['route', 'del', 'unreachable', '10.0.0.0/8']),
    dns: await require('node:dns').promises.resolve4(env.dnsName).then((a) => a.sort().join(), (e) => e.code),
  }));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

/** The non-root "Pier": imports first (the repository need not be readable by nobody), then drops its uid. */
function hostScript(o: { release: string; marker: string; probe: Record<string, unknown> }): string {
  const mod = (f: string) => JSON.stringify(fileURLToPath(new URL(f, import.meta.url)));
  return `import http from 'node:http';
import net from 'node:net';
import { sendSocket } from ${mod('./connection-handoff.ts')};
import { appAddress, spawnApp, waitHealthy } from ${mod('./local-driver.ts')};
import { sandboxProblem } from ${mod('./sandbox.ts')};
if (process.getuid() === 0) { process.setgroups([]); process.setgid(${NOBODY}); process.setuid(${NOBODY}); }
const root = ${JSON.stringify(root)};
const get = (proc, p) => new Promise((resolve, reject) => http.get({ ...appAddress(proc), path: p, agent: false }, (res) => {
  let b = ''; res.setEncoding('utf8'); res.on('data', (d) => { b += d; }); res.on('end', () => resolve(b));
}).on('error', reject));
// A client's connection handed to the app over its IPC channel, as the router does: the answer's status line.
const handoff = (proc) => new Promise((resolve) => {
  const srv = net.createServer((sock) => sock.once('data', (head) => {
    sock.pause();
    if (!sendSocket(proc.child, sock, { pier: 'conn', head: head.toString('latin1'), slug: 'app', domain: 'apps.test', proto: 'http' })) resolve('not sent');
  }));
  srv.listen(0, '127.0.0.1', () => {
    const c = net.connect(srv.address().port, '127.0.0.1', () => c.write('GET / HTTP/1.1\\r\\nHost: app.apps.test\\r\\nConnection: close\\r\\n\\r\\n'));
    let b = '';
    c.on('data', (d) => { b += d; });
    c.on('close', () => { srv.close(); resolve(b.split('\\r\\n')[0]); });
  });
});
const report = (o) => console.log(JSON.stringify(o));
report({ uid: process.getuid(), problem: sandboxProblem(root + '/check'),
  noUnshare: sandboxProblem(root + '/check', undefined, '/nonexistent/unshare'),
  noUserns: sandboxProblem(root + '/check', undefined, root + '/unshare-refused'),
  noTun: sandboxProblem(root + '/check', undefined, undefined, root + '/tun-closed') });
let neighbour = 0;
for (const [name, allow] of [['allowed', [${JSON.stringify(`${outwardAddress()}/32`)}]], ['closed', []]]) {
  const lines = [];
  const proc = await spawnApp({ cwd: ${JSON.stringify(o.release)}, start: 'node server.js ${o.marker}', handoff: true,
    env: { PROBE: ${JSON.stringify(JSON.stringify(o.probe))} }, onLine: (_s, l) => lines.push(l),
    sandbox: { projectId: name, dataDir: root + '/data-' + name, runDir: root + '/run-' + name, outboundAllow: allow,
      limits: { memoryMb: 256, pids: 64, openFiles: 512, diskMb: 64, cpuPercent: 100 }, cgroups: { kind: 'none' } } });
  const health = await waitHealthy(proc, '/', 15000);
  // The second app tries the first one's port (it is still running).
  report({ name, health, lines, pid: proc.pid, hostPids: await proc.hostPids(), net: health.ok ? JSON.parse(await get(proc, '/net?neighbour=' + neighbour)) : null,
    handoff: health.ok && proc.ipc ? await handoff(proc) : 'no ipc' });
  neighbour = proc.port;
}
setInterval(() => {}, 1000);
`;
}

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-rootless-'));
  fs.chmodSync(root, 0o755);
  if (process.getuid?.() === 0) fs.chownSync(root, NOBODY, NOBODY);
  loopbackServer = await listen('127.0.0.1');
  outwardServer = await listen('0.0.0.0');
  hostDns = await hostDnsAnswer();
});

afterAll(() => {
  loopbackServer?.close();
  outwardServer?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

type AppReport = {
  health: unknown;
  lines: string[];
  pid: number;
  hostPids: number[];
  net: Record<string, unknown>;
  handoff: string;
};

const processesMatching = (text: string) =>
  fs
    .readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(text);
      } catch {
        return false;
      }
    });

describe('the app sandbox when Pier is not root', () => {
  it('gives each app its own network namespace: out to OUTBOUND_ALLOW, never the host or private ranges; gone with Pier', async () => {
    const marker = `pier-rootless-${process.pid}-${Date.now()}`;
    const release = path.join(root, 'release');
    fs.mkdirSync(release);
    fs.writeFileSync(path.join(release, 'server.js'), APP);
    // unshare as it fails where unprivileged user namespaces are not allowed.
    fs.writeFileSync(
      path.join(root, 'unshare-refused'),
      '#!/bin/sh\necho "unshare: unshare failed: Operation not permitted" >&2\nexit 1\n',
      { mode: 0o755 },
    );
    // A tun device only root may open (mode 0600, as a container without udev leaves it).
    fs.writeFileSync(path.join(root, 'tun-closed'), '', { mode: 0o600 });
    if (process.getuid?.() !== 0) fs.chmodSync(path.join(root, 'tun-closed'), 0o000);
    const host = path.join(root, 'host.mjs');
    fs.writeFileSync(
      host,
      hostScript({
        release,
        marker,
        probe: {
          host: outwardAddress(),
          outwardPort: portOf(outwardServer),
          loopbackPort: portOf(loopbackServer),
          ip: ipBinary(),
          dnsName: DNS_NAME,
        },
      }),
    );
    const pier = spawn(process.execPath, [host], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    pier.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    const reports: Record<string, unknown>[] = [];
    const lines = readline.createInterface({ input: pier.stdout });
    await new Promise<void>((resolve) => {
      lines.on('line', (l) => {
        reports.push(JSON.parse(l));
        if (reports.length === 3) resolve();
      });
      pier.once('exit', () => resolve());
    });
    try {
      expect(reports.length, stderr).toBe(3);
      const [check, allowed, closed] = reports as [
        { uid: number; problem: string | null; noUnshare: string; noUserns: string; noTun: string },
        AppReport,
        AppReport,
      ];
      expect(check.uid).toBe(process.getuid?.() === 0 ? NOBODY : process.getuid?.());
      // The startup check passes as nobody: the hosting role would start.
      expect(check.problem).toBeNull();
      // And says what is missing when it is not.
      expect(check.noUnshare).toMatch(/unshare is not installed \(apt-get install util-linux\)/);
      expect(check.noUserns).toMatch(
        /Pier is not root, and it cannot make an app's user and network namespace \(unshare: unshare failed: Operation not permitted\)\. Allow unprivileged user namespaces/,
      );
      expect(check.noTun).toMatch(
        /Pier is not root, and it cannot open .*tun-closed \(EACCES\): slirp4netns gives each app its way out through it\. Make it readable and writable by all \(chmod 0666/,
      );
      expect(allowed.health, allowed.lines.join('\n')).toEqual({ ok: true });
      expect(closed.health, closed.lines.join('\n')).toEqual({ ok: true });
      // The operator's opening (the host's outward address, /32) is reachable; the rest is closed.
      expect(allowed.net.allowed).toBe('ok connected');
      expect(closed.net.allowed).toBe('EHOSTUNREACH');
      // Another app's port, on the host's loopback: not this app's loopback.
      expect(closed.net.neighbour).toBe('ECONNREFUSED');
      // Pier reaches the app both ways: the proxy path's Unix socket (the answers above) and the hand-off.
      expect([allowed.handoff, closed.handoff]).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
      for (const n of [allowed.net, closed.net]) {
        expect(n.uid).toBe(1000);
        expect(n.loopback).toBe('ECONNREFUSED');
        expect(n.postgres).toBe('ECONNREFUSED');
        expect(n.privateRange).toBe('EHOSTUNREACH');
        expect(n.metadata).toBe('EHOSTUNREACH');
        // No CAP_NET_ADMIN over its namespace: the routes stay.
        expect(n.routeDel).toMatch(/^failed .*Operation not permitted/);
        // slirp's DNS forwarder answers as the host's resolver does (where this machine resolves at all).
        if (hostHasDns(hostDns)) expect(n.dns).toBe(hostDns);
      }
      // Outside, the app runs as Pier's (non-root) uid.
      const uid = fs.readFileSync(`/proc/${closed.hostPids[0]}/status`, 'utf8').match(/^Uid:\s+(\d+)/m)?.[1];
      expect(Number(uid)).toBe(check.uid);
      expect(processesMatching(marker).length).toBeGreaterThan(0);
      // slirp4netns of each app, found by the namespace path it was given.
      for (const r of [allowed, closed]) expect(processesMatching(`/proc/${r.pid}/ns/net`).length).toBe(1);
    } finally {
      pier.kill('SIGKILL');
    }
    // Pier killed with SIGKILL: the apps and their slirp4netns go with it.
    const left = () => [
      ...processesMatching(marker),
      ...(reports.slice(1) as { pid: number }[]).flatMap((r) => processesMatching(`/proc/${r.pid}/ns/net`)),
    ];
    const deadline = Date.now() + 5000;
    while (left().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(left()).toEqual([]);
  }, 60_000);
});
