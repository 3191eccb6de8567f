import { type ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { DiskBlobStore } from '../../src/core/blobs/disk.ts';
import { systemClock } from '../../src/core/clock.ts';
import { Keyring } from '../../src/core/crypto.ts';
import { openTestDb } from '../harness.ts';

// The real process: `node src/main.ts serve`, stopped with SIGTERM while an upload is still arriving.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

describe('pier serve', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('on SIGTERM finishes the request in flight, then exits 0', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-e2e-'));
    const { url: databaseUrl, db, drop } = await openTestDb();
    await db.close();
    cleanups.push(drop, () => fs.rmSync(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const secret = crypto.randomBytes(32).toString('base64url');
    const child: ChildProcess = spawn(process.execPath, ['src/main.ts', 'serve'], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        PIER_SECRET_KEY: secret,
        LOG_LEVEL: 'silent',
        SHUTDOWN_GRACE_MS: '5000',
        ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (c) => {
      stderr += c;
    });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    cleanups.push(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });

    const end = Date.now() + 90_000;
    for (;;) {
      const ok = await fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (Date.now() > end || child.exitCode !== null) throw new Error(`pier did not start: ${stderr}`);
      await sleep(200);
    }

    // Same master key, same public URL: this store presigns URLs the child accepts.
    const signer = new DiskBlobStore({
      root: path.join(dataDir, 'blobs'),
      keyring: new Keyring(Buffer.from(secret, 'base64url')),
      clock: systemClock,
      publicUrl: base,
    });
    const put = await signer.presignPut('drain/upload.txt', { expiresInSec: 300 });
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(put.url, { method: 'PUT', headers: { 'content-length': '10' } }, (res) => {
        let body = '';
        res.on('data', (c) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.write('hello');
      // The request is in flight when SIGTERM arrives; the rest of the body comes after.
      setTimeout(() => {
        child.kill('SIGTERM');
        setTimeout(() => req.end('world'), 500);
      }, 300);
    });

    const res = await response;
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ key: 'drain/upload.txt', size: 10 });
    expect(await exited).toBe(0);
    expect(fs.readFileSync(path.join(dataDir, 'blobs', 'objects', 'drain', 'upload.txt'), 'utf8')).toBe(
      'helloworld',
    );
    // New connections are refused once it has gone.
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  }, 120_000);
});
