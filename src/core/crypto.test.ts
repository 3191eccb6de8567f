import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { Keyring, loadMasterKey, randomBase62 } from './crypto.ts';

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'pier-crypto-'));

describe('Keyring encryption at rest', () => {
  const k = Keyring.random();

  it('round-trips any string, including empty and non-ASCII ones', () => {
    for (const plain of ['', 'sk_live_123', 'päßwörd 🔑', 'x'.repeat(70_000)]) {
      const stored = k.encrypt(plain);
      expect(stored).not.toContain(plain || '\u0000');
      expect(k.decrypt(stored)).toBe(plain);
    }
  });

  it('gives a different ciphertext each time for the same value', () => {
    const a = k.encrypt('same');
    const b = k.encrypt('same');
    expect(a).not.toBe(b);
    expect(k.decrypt(a)).toBe(k.decrypt(b));
  });

  it('detects tampering with any part and refuses another key', () => {
    const stored = k.encrypt('secret value');
    const [version, wrapped, body] = stored.split('.') as [string, string, string];
    const flip = (s: string, i: number) => {
      const buf = Buffer.from(s, 'base64url');
      buf[i] = buf[i]! ^ 1;
      return buf.toString('base64url');
    };
    // body = IV (12 bytes) | GCM tag (16) | ciphertext; a flipped bit anywhere fails authentication.
    for (const i of [0, 12, 28, 39])
      expect(() => k.decrypt([version, wrapped, flip(body, i)].join('.'))).toThrow();
    expect(() => k.decrypt([version, flip(wrapped, 20), body].join('.'))).toThrow();
    expect(() => k.decrypt(['v2', wrapped, body].join('.'))).toThrow(/format/);
    expect(() => k.decrypt('garbage')).toThrow();
    expect(() => Keyring.random().decrypt(stored)).toThrow();
  });

  it('signs and verifies URL data, and hashes secrets deterministically per key', () => {
    const sig = k.sign('GET /blobs/a');
    expect(k.verify('GET /blobs/a', sig)).toBe(true);
    expect(k.verify('GET /blobs/b', sig)).toBe(false);
    expect(Keyring.random().verify('GET /blobs/a', sig)).toBe(false);
    expect(k.hashSecret('s')).toBe(k.hashSecret('s'));
    expect(k.hashSecret('s')).not.toBe(Keyring.random().hashSecret('s'));
    // Signing and hashing use different derived keys.
    expect(k.sign('s')).not.toBe(Buffer.from(k.hashSecret('s'), 'hex').toString('base64url'));
  });

  it('refuses a master key shorter than 32 bytes', () => {
    expect(() => new Keyring(crypto.randomBytes(16))).toThrow(/32 bytes/);
  });
});

describe('master key', () => {
  it('is generated into DATA_DIR/secret.key with mode 0600 on first start and reused after', () => {
    const dir = path.join(tempDir(), 'data');
    const first = loadMasterKey(dir);
    const file = path.join(dir, 'secret.key');
    expect(first.length).toBe(32);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    const again = loadMasterKey(dir);
    expect(again.equals(first)).toBe(true);
    // Values encrypted before a restart still decrypt after it.
    const stored = new Keyring(first).encrypt('kept');
    expect(new Keyring(again).decrypt(stored)).toBe('kept');
  });

  it('honours PIER_SECRET_KEY and then writes no key file', () => {
    const dir = tempDir();
    const key = crypto.randomBytes(32).toString('base64url');
    const config = loadConfig({ DATA_DIR: dir, PIER_SECRET_KEY: key });
    const master = loadMasterKey(config.dataDir, config.secretKey);
    expect(master.equals(Buffer.from(key, 'base64url'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'secret.key'))).toBe(false);
    // Two processes given the same key read each other's secrets.
    const stored = new Keyring(master).encrypt('shared');
    expect(new Keyring(loadMasterKey(tempDir(), key)).decrypt(stored)).toBe('shared');
    expect(() => loadConfig({ PIER_SECRET_KEY: 'too-short' })).toThrow(/PIER_SECRET_KEY/);
  });
});

describe('randomBase62', () => {
  it('returns the asked length of base62 characters, uniformly enough', () => {
    const s = randomBase62(62_000);
    expect(s).toMatch(/^[0-9A-Za-z]{62000}$/);
    const counts = new Map<string, number>();
    for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // Expected 1000 each; a modulo bias would push the first 8 characters ~25% higher.
    for (const n of counts.values()) expect(n).toBeGreaterThan(800);
    for (const n of counts.values()) expect(n).toBeLessThan(1200);
  });
});
