import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import type { Config } from '../src/config.ts';

// A local S3-compatible server (s3rver) on 127.0.0.1:<random port> with a temp folder, for tests of the
// S3 blob driver and of anything that stores blobs on S3.

export type TestS3 = { s3: NonNullable<Config['s3']>; close(): Promise<void> };

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
  return {
    s3: {
      endpoint: `http://127.0.0.1:${addr.port}`,
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
