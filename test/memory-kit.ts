import { type SQL, sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { vectorTopKSql } from '../src/areas/memory/recall.ts';
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

/** EXPLAIN of recall's vector top 10 under recall's settings for a large set: seq scans and sorts made expensive,
 * so only an HNSW index avoids both (with sorts allowed, PostgreSQL may pick the scope index and sort a few rows). */
async function vectorPlan(t: TestApp, where: SQL, distance: SQL): Promise<string> {
  return t.deps.db.orm.transaction(async (tx) => {
    await tx.execute(
      sql`SELECT set_config('enable_seqscan', 'off', true), set_config('enable_sort', 'off', true)`,
    );
    const r = await tx.execute(sql`EXPLAIN ${vectorTopKSql(where, distance, 10, false)}`);
    return (r as unknown as { rows: { 'QUERY PLAN': string }[] }).rows.map((x) => x['QUERY PLAN']).join('\n');
  });
}

/** The plan uses `index`, waiting up to 15 s for it: PostgreSQL ignores an index built over broken HOT chains
 * (`pg_index.indcheckxmin`) until every transaction older than the index has ended, and in CI other test files'
 * transactions on the same server held that back once. An index that never becomes usable still fails. */
export async function expectPlanUses(t: TestApp, index: string, where: SQL, distance: SQL): Promise<void> {
  const deadline = Date.now() + 15_000;
  let plan = await vectorPlan(t, where, distance);
  while (!plan.includes(index) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    plan = await vectorPlan(t, where, distance);
  }
  expect(plan).toContain(index);
}
