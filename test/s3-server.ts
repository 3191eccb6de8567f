import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import type { Config } from '../src/config.ts';

// A local S3-compatible server (s3rver) on 127.0.0.1:<random port> with a temp folder, for tests of the
// S3 blob driver and of anything that stores blobs on S3: `testApp({ env: s3.env })` gives an app whose
// deps.blobs is the S3 driver. Note s3rver does not verify presigned-URL signatures.

export type TestS3 = {
  s3: NonNullable<Config['s3']>;
  /** The S3_* variables pointing Pier at this server. */
  env: Record<string, string>;
  close(): Promise<void>;
};

export async function startTestS3(bucket = 'pier-test'): Promise<TestS3> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    directory,
    silent: true,
    configureBuckets: [{ name: bucket }],
  });
  const addr = await server.run();
  const endpoint = `http://127.0.0.1:${addr.port}`;
  return {
    env: {
      S3_BUCKET: bucket,
      S3_ENDPOINT: endpoint,
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      S3_FORCE_PATH_STYLE: 'true',
    },
    s3: {
      endpoint,
      region: 'us-east-1',
      bucket,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
    },
    close: async () => {
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}
