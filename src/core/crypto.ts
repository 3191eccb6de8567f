import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

// Envelope encryption: each value gets its own data key (AES-256-GCM), wrapped by a key-encryption key
// derived from the master key. Rotating the master key means re-wrapping data keys, not re-encrypting data.

const VERSION = 'v1';

export class Keyring {
  readonly #kek: Buffer;
  // A KeyObject, prepared once: createHmac with a raw Buffer re-imports the key on every call.
  readonly #hmacKey: crypto.KeyObject;
  readonly #signKey: Buffer;

  constructor(master: Buffer) {
    if (master.length < 32) throw new Error('The master key must be at least 32 bytes.');
    const derive = (info: string) =>
      Buffer.from(crypto.hkdfSync('sha256', master, Buffer.alloc(0), info, 32));
    this.#kek = derive('pier/kek');
    this.#hmacKey = crypto.createSecretKey(derive('pier/credential-hmac'));
    this.#signKey = derive('pier/url-sign');
  }

  static random(): Keyring {
    return new Keyring(crypto.randomBytes(32));
  }

  /** Encrypts a string; the result is safe to store (text, no plain value). */
  encrypt(plain: string): string {
    const dek = crypto.randomBytes(32);
    const wrapped = gcmSeal(this.#kek, dek);
    const body = gcmSeal(dek, Buffer.from(plain, 'utf8'));
    return [VERSION, wrapped, body].join('.');
  }

  decrypt(stored: string): string {
    const [version, wrapped, body] = stored.split('.');
    if (version !== VERSION || !wrapped || !body) throw new Error('Unknown ciphertext format.');
    const dek = gcmOpen(this.#kek, wrapped);
    return gcmOpen(dek, body).toString('utf8');
  }

  /** HMAC-SHA-256 of a credential secret, hex. */
  hashSecret(secret: string): string {
    return crypto.createHmac('sha256', this.#hmacKey).update(secret).digest('hex');
  }

  /** Signature for URLs Pier serves itself (presigned blob URLs, cursors). */
  sign(data: string): string {
    return crypto.createHmac('sha256', this.#signKey).update(data).digest('base64url');
  }

  verify(data: string, signature: string): boolean {
    return safeEqual(this.sign(data), signature);
  }
}

function gcmSeal(key: Buffer, plain: Buffer): string {
  const iv = crypto.randomBytes(12);
  const c = crypto.createCipheriv('aes-256-gcm', key, iv);
  const ct = Buffer.concat([c.update(plain), c.final()]);
  return Buffer.concat([iv, c.getAuthTag(), ct]).toString('base64url');
}

function gcmOpen(key: Buffer, sealed: string): Buffer {
  const buf = Buffer.from(sealed, 'base64url');
  const d = crypto.createDecipheriv('aes-256-gcm', key, buf.subarray(0, 12));
  d.setAuthTag(buf.subarray(12, 28));
  return Buffer.concat([d.update(buf.subarray(28)), d.final()]);
}

export function safeEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a);
  const bb = Buffer.from(b);
  return ba.length === bb.length && crypto.timingSafeEqual(ba, bb);
}

/** The master key from PIER_SECRET_KEY, else DATA_DIR/secret.key (generated with mode 0600 on first start). */
export function loadMasterKey(dataDir: string, fromEnv?: string): Buffer {
  if (fromEnv) return Buffer.from(fromEnv, 'base64url');
  const file = path.join(dataDir, 'secret.key');
  if (fs.existsSync(file)) return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64url');
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const key = crypto.randomBytes(32);
  fs.writeFileSync(file, key.toString('base64url'), { mode: 0o600, flag: 'wx' });
  return key;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform random base62 string (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of crypto.randomBytes(length * 2)) {
      if (b < 248 && out.length < length) out += BASE62[b % 62];
    }
  }
  return out;
}
