import path from 'node:path';
import type { Config } from '../../config.ts';
import { type Clock, systemClock } from '../clock.ts';
import type { Keyring } from '../crypto.ts';
import type { BlobStore } from './blob-store.ts';
import { DiskBlobStore } from './disk.ts';
import { S3BlobStore } from './s3.ts';

/** S3-compatible storage when S3_BUCKET is set, otherwise local disk under DATA_DIR/blobs. */
export function createBlobStore(config: Config, keyring: Keyring, clock: Clock = systemClock): BlobStore {
  if (config.s3) return new S3BlobStore(config.s3, clock);
  return new DiskBlobStore({
    root: path.join(config.dataDir, 'blobs'),
    keyring,
    clock,
    publicUrl: config.publicUrl,
  });
}
