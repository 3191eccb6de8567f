import { type TestApp, testApp } from './harness.ts';
import { expectV1Security, type V1Tenant } from './v1-security.ts';

// Web data tests' common ground: a Pier with the job worker running that may fetch the local test site
// (test/webdata-site.ts) without tripping the rate limit, polling a job until it settles, and the tenant
// checks on a job's routes.

/** A Pier with the job worker, outbound fetches to 127.0.0.1 allowed and no practical rate limit. */
export function webdataTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  return testApp({
    background: true,
    env: {
      OUTBOUND_ALLOW: '127.0.0.1/32',
      V1_RATE_LIMIT_BURST: '1000000',
      V1_RATE_LIMIT_PER_SEC: '100000',
      ...env,
    },
  });
}

/**
 * GET `path` every 50 ms until the job it names is neither pending nor processing, and answer it; throws
 * after `tries` polls (the default, a minute, leaves room for a loaded machine).
 */
export async function settled(t: TestApp, key: string, path: string, tries = 1200) {
  for (let i = 0; i < tries; i++) {
    const job = (await t.v1('GET', path, key)).json();
    if (!['pending', 'processing'].includes(job.status)) return job;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${path} did not finish`);
}

/** expectV1Security on each of a job's routes, in order, each answering `notFoundCode` to other tenants. */
export async function expectJobRoutesSecured(
  t: TestApp,
  owner: V1Tenant,
  notFoundCode: string,
  routes: [method: 'GET' | 'POST' | 'DELETE', url: string][],
): Promise<void> {
  for (const [method, url] of routes) await expectV1Security(t, { method, url, owner, notFoundCode });
}
