import type { Readable } from 'node:stream';
import type { BlobInfo, BlobStore, PresignedPut } from '../src/core/blobs/blob-store.ts';

// An in-memory BlobStore for tests that do not go through presigned URLs.
export class MemoryBlobStore implements BlobStore {
  readonly driver = 'disk' as const;
  readonly objects = new Map<string, { body: Buffer; contentType?: string }>();

  async put(key: string, body: Buffer | Readable, opts: { contentType?: string } = {}): Promise<BlobInfo> {
    const chunks: Buffer[] = [];
    if (Buffer.isBuffer(body)) chunks.push(body);
    else for await (const c of body) chunks.push(Buffer.from(c));
    const buf = Buffer.concat(chunks);
    this.objects.set(key, { body: buf, contentType: opts.contentType });
    return { size: buf.length, contentType: opts.contentType };
  }
  async get(key: string) {
    const o = this.objects.get(key);
    if (!o) return null;
    const { Readable } = await import('node:stream');
    return { size: o.body.length, contentType: o.contentType, body: Readable.from([o.body]) };
  }
  async head(key: string): Promise<BlobInfo | null> {
    const o = this.objects.get(key);
    return o ? { size: o.body.length, contentType: o.contentType } : null;
  }
  async delete(key: string): Promise<void> {
    this.objects.delete(key);
  }
  async presignPut(key: string, opts: { expiresInSec: number; contentType?: string }): Promise<PresignedPut> {
    return {
      url: `memory://${key}`,
      method: 'PUT',
      headers: opts.contentType ? { 'content-type': opts.contentType } : {},
      expiresAt: new Date(Date.now() + opts.expiresInSec * 1000),
    };
  }
  async presignGet(key: string): Promise<string> {
    return `memory://${key}`;
  }
}
