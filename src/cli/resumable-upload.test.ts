import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../test/harness.ts';
import { seedV1Tenant } from '../../test/seed.ts';
import type { V1Tenant } from '../../test/v1-security.ts';
import { uploadResumable } from './resumable-upload.ts';

// The CLI's resumable uploader against a real listening Pier: pieces lost on the network (one never sent,
// one sent but its answer lost) are resumed from the server's offset, and the confirmed asset is whole.

describe('pier cdn upload --resumable (tus pieces)', () => {
  let t: TestApp;
  let a: V1Tenant;
  let dir: string;

  beforeAll(async () => {
    t = await testApp({ listen: true });
    a = await seedV1Tenant(t.deps);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-tus-cli-'));
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('survives a piece that never left and one whose answer was lost; the asset is byte-identical', async () => {
    const bytes = crypto.randomBytes(300_000);
    const file = path.join(dir, 'data.bin');
    fs.writeFileSync(file, bytes);
    const up = (
      await t.v1('POST', '/cdn/upload', a.live, {
        filename: 'data.bin',
        mimeType: 'application/octet-stream',
        size: bytes.length,
        resumable: true,
      })
    ).json();
    let patches = 0;
    const flaky: typeof fetch = async (url, init) => {
      const local = String(url).replace(t.deps.config.publicUrl, t.url);
      if (init?.method === 'PATCH') {
        patches++;
        if (patches === 2) throw new TypeError('fetch failed'); // never sent
        if (patches === 4) {
          await fetch(local, init); // stored, but the answer is lost
          throw new TypeError('fetch failed');
        }
      }
      return fetch(local, init);
    };
    const seen: number[] = [];
    await uploadResumable(up, file, (sent) => seen.push(sent), {
      fetchImpl: flaky,
      pieceBytes: 64 * 1024,
      backoffMs: 1,
    });
    expect(seen.at(-1)).toBe(bytes.length);
    // 5 pieces, plus the one never sent and the one sent twice would be 7: the lost answer's piece is not resent.
    expect(patches).toBe(6);
    const asset = (await t.v1('POST', `/cdn/upload/${up.assetId}/confirm`, a.live, {})).json();
    expect(asset).toMatchObject({ status: 'ready', size: bytes.length });
    const got = Buffer.from(
      await (await fetch(asset.cdnUrl.replace(t.deps.config.publicUrl, t.url))).arrayBuffer(),
    );
    expect(got.equals(bytes)).toBe(true);
  });

  it('stops with the server’s reason when the upload cannot go on (confirmed already)', async () => {
    const file = path.join(dir, 'small.bin');
    fs.writeFileSync(file, Buffer.alloc(10, 1));
    const up = (
      await t.v1('POST', '/cdn/upload', a.live, {
        filename: 'small.bin',
        mimeType: 'application/octet-stream',
        size: 10,
        resumable: true,
      })
    ).json();
    const local: typeof fetch = (url, init) =>
      fetch(String(url).replace(t.deps.config.publicUrl, t.url), init);
    await uploadResumable(up, file, () => {}, { fetchImpl: local });
    await t.v1('POST', `/cdn/upload/${up.assetId}/confirm`, a.live, {});
    await expect(uploadResumable(up, file, () => {}, { fetchImpl: local })).rejects.toThrow(
      /HTTP 409.*confirmed/,
    );
  });
});
