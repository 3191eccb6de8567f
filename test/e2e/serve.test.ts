import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../harness.ts';

// The real `pier serve` process: what an operator sees on start, health, request ids, and a SIGTERM that
// lets an in-flight request finish before exiting 0. Runs on PGlite only (process-level behaviour).

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const node = fs.existsSync(path.join(root, 'node_modules/.bin/node'))
  ? path.join(root, 'node_modules/.bin/node')
  : process.execPath;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

type Server = {
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
  port: number;
  dataDir: string;
};

async function start(dataDir: string): Promise<Server> {
  const port = await freePort();
  const child = spawn(node, ['src/main.ts', 'serve'], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      PUBLIC_URL: `http://localhost:${port}`,
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const deadline = Date.now() + 60_000;
  while (!/operator key: .+\n/.test(out)) {
    if (Date.now() > deadline || child.exitCode !== null) {
      // Not yet in `children`: a server that was only slow to start would otherwise outlive the suite.
      child.kill('SIGKILL');
      throw new Error(`pier did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, out: () => out, exited, port, dataDir };
}

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});

/** Sends the head and part of the body now, the rest when asked; resolves with the raw response. */
function slowRequest(port: number, head: string, body: string) {
  const sock = net.connect(port, '127.0.0.1');
  let response = '';
  sock.on('data', (d) => {
    response += d;
  });
  const done = new Promise<string>((r) => sock.on('close', () => r(response)));
  sock.write(
    `${head}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`,
  );
  return { finish: () => sock.write(body.slice(5)), done };
}

describe.skipIf(onPostgres)('pier serve', () => {
  it('starts, prints where it is and where the operator key is, serves, and drains on SIGTERM', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-serve-'));
    // First start creates the data directory, key and database; the second is a warm start. How fast it is
    // is a benchmark's question (bench/startup), not a timed assertion that a loaded CI machine fails.
    const cold = await start(dataDir);
    children.push(cold.child);
    cold.child.kill('SIGTERM');
    expect(await cold.exited).toBe(0);

    const s = await start(dataDir);
    children.push(s.child);
    const base = `http://localhost:${s.port}`;
    expect(s.out()).toContain(`Pier is running at ${base}`);
    const keyFile = path.join(dataDir, 'operator.key');
    expect(s.out()).toContain(`operator key: ${keyFile}`);
    expect((fs.statSync(keyFile).mode & 0o777).toString(8)).toBe('600');
    const opKey = fs.readFileSync(keyFile, 'utf8').trim();

    const health = await fetch(`http://127.0.0.1:${s.port}/healthz`, {
      headers: { 'x-request-id': 'probe-1' },
    });
    expect(health.status).toBe(200);
    expect(health.headers.get('x-request-id')).toBe('probe-1');
    const ready = await fetch(`http://127.0.0.1:${s.port}/readyz`);
    expect(await ready.json()).toEqual({ ok: true });
    expect(ready.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);

    // An in-flight request (body half sent) when SIGTERM arrives still completes.
    const body = JSON.stringify({ email: 'drain@example.com' });
    const head = `POST /api/fn/adminCreateUser HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAuthorization: Bearer ${opKey}\r\n`;
    const req = slowRequest(s.port, head, body);
    await new Promise((r) => setTimeout(r, 300));
    s.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    req.finish();
    const raw = await req.done;
    expect(raw).toMatch(/^HTTP\/1\.1 200/);
    expect(raw).toContain('"email":"drain@example.com"');
    expect(await s.exited).toBe(0);
    // Logs are JSON lines and hold no credential.
    expect(s.out()).not.toContain(opKey.split('.')[2]!);
    expect(s.out()).toMatch(/"msg":"request"/);
    // The log is buffered: the access line of the request that finished during the drain is still written.
    expect(s.out()).toMatch(/"method":"POST","path":"\/api\/fn\/adminCreateUser","status":200/);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 150_000);
});
