import { expect } from 'vitest';
import type { TestApp } from './harness.ts';
import { seedV1Tenant } from './seed.ts';

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
export type V1Tenant = Awaited<ReturnType<typeof seedV1Tenant>>;

/**
 * The security cases every v1 route must pass, in one place: no key → 401, an invalid key → 401, a
 * personal token → 403. With `notFoundCode` (a route on a resource the owner's live key created), another
 * organization's key and the owner's own test key (sandbox) both get that 404, so nothing leaks across
 * tenants or environments.
 */
export async function expectV1Security(
  t: TestApp,
  opts: { method: Method; url: string; body?: unknown; owner: V1Tenant; notFoundCode?: string },
): Promise<void> {
  const { method, url, body, owner } = opts;
  const none = await t.v1(method, url, undefined, body);
  expect(none.statusCode, `${method} ${url} without a key`).toBe(401);
  expect(none.json().error.code).toBe('AUTH_REQUIRED');

  const forged = `sk_live.${'A'.repeat(16)}.${'b'.repeat(43)}`;
  const bad = await t.v1(method, url, forged, body);
  expect(bad.statusCode, `${method} ${url} with an unknown key`).toBe(401);

  const personal = await t.v1(method, url, owner.owner.token, body);
  expect(personal.statusCode, `${method} ${url} with a personal token`).toBe(403);
  expect(personal.json().error.code).toBe('FORBIDDEN');

  if (opts.notFoundCode) {
    const other = await seedV1Tenant(t.deps);
    const foreign = await t.v1(method, url, other.live, body);
    expect(foreign.statusCode, `${method} ${url} from another organization`).toBe(404);
    expect(foreign.json().error.code).toBe(opts.notFoundCode);
    const sandbox = await t.v1(method, url, owner.test, body);
    expect(sandbox.statusCode, `${method} ${url} with the owner's test key`).toBe(404);
    expect(sandbox.json().error.code).toBe(opts.notFoundCode);
  }
}
