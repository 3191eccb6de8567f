import { expect } from 'vitest';
import type { TestApp } from './harness.ts';
import { seedV1Tenant } from './seed.ts';
import { type V1Client, v1Client } from './v1-client.ts';

// Memory tests: a fresh organization with a live (production) and a test (sandbox) key per test.

export async function memoryTenant(t: TestApp) {
  const tenant = await seedV1Tenant(t.deps);
  const live: V1Client = v1Client(t, tenant.live);
  const sandbox: V1Client = v1Client(t, tenant.test);
  return { tenant, orgId: tenant.org.id, live, sandbox };
}

export const hasVector = (t: TestApp) => t.deps.db.features.has('vector');

/** Without pgvector (PostgreSQL without the extension) memory answers 503 with the fix. */
export async function expectVectorMissing(t: TestApp): Promise<void> {
  const { live } = await memoryTenant(t);
  const res = await live.post('/memory/memories', { content: 'x' });
  expect(res.statusCode).toBe(503);
  expect(res.json().error.code).toBe('VECTOR_EXTENSION_MISSING');
  expect(res.json().error.message).toMatch(/pgvector/);
}
