import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedNon200, needsVector, validBodies } from '../../test/fn-samples.ts';
import { type TestApp, testApp } from '../../test/harness.ts';
import { seedOperator, seedOrg, seedPlatform, seedProject } from '../../test/seed.ts';
import { mintLoginCode } from '../areas/identity/login-codes.ts';
import { issuePersonalToken } from '../areas/identity/tokens.ts';
import type { FnDef } from './fn-kit.ts';
import { functions } from './fn-registry.ts';

// Property: whatever body arrives (any JSON value, or a valid body bent out of shape), with the right kind
// of credential or none, no function answers 5xx, and every 4xx carries the error envelope.

let t: TestApp;
let ctx: { orgSlug: string; orgId: string; projectSlug: string; email: string; code: string };
let creds: Record<'user' | 'platform' | 'operator', string>;
let ownerId: string;

beforeAll(async () => {
  // Failed-guess limiting would turn most exchange fuzzing into 429s; lift it for this file.
  t = await testApp({ limits: { loginCodeFailures: { limit: 1_000_000, windowSec: 60 } } });
  const { org, owner } = await seedOrg(t.deps);
  const project = await seedProject(t.deps, org);
  ownerId = owner.user.id;
  const { code } = await mintLoginCode(t.deps, { userId: owner.user.id, label: 'fuzz' });
  ctx = { orgSlug: org.slug, orgId: org.id, projectSlug: project.slug, email: owner.user.email, code };
  creds = {
    user: owner.token,
    platform: (await seedPlatform(t.deps, ['org.create', 'project.create', 'deploy', 'model.resolve'])).token,
    operator: (await seedOperator(t.deps)).token,
  };
});
afterAll(async () => {
  await t?.close();
});

const json = fc.jsonValue({ maxDepth: 3 });
const nasty = fc.oneof(
  json,
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '../../etc/passwd',
    "'; drop table users; --",
    'x'.repeat(70_000),
    '𝕏'.repeat(40),
  ),
  fc.constantFrom(-1, 0, 1e308, Number.MAX_SAFE_INTEGER, true, null, [], {}),
);

/** Mutations of a valid body: drop keys, replace values, add unknown keys, wrap in `args`. */
function mutated(valid: Record<string, unknown>) {
  const keys = Object.keys(valid);
  return fc.oneof(
    json,
    fc
      .record({ k: fc.constantFrom(...(keys.length ? keys : ['x'])), v: nasty })
      .map(({ k, v }) => ({ ...valid, [k]: v })),
    fc.subarray(keys).map((keep) => Object.fromEntries(keep.map((k) => [k, valid[k]]))),
    fc
      .dictionary(fc.string({ maxLength: 8 }), nasty, { maxKeys: 3 })
      .map((extra) => ({ ...valid, ...extra })),
    fc.constant({ args: valid }),
    fc.string({ maxLength: 40 }).map((raw) => ({ raw })),
  );
}

function assertSane(
  res: { statusCode: number; json: () => unknown; body: string },
  what: string,
  memoryOff = false,
) {
  // Memory without pgvector: the one documented 5xx, the same as v1's.
  const code = () => (res.json() as { error?: { code?: string } }).error?.code;
  if (memoryOff && res.statusCode === 503 && code() === VECTOR_MISSING) return;
  expect(res.statusCode, `${what} → ${res.statusCode} ${res.body.slice(0, 300)}`).toBeLessThan(500);
  if (res.statusCode >= 400) {
    const b = res.json() as { error?: { code?: unknown; message?: unknown } };
    expect(typeof b.error?.code, what).toBe('string');
    expect(typeof b.error?.message, what).toBe('string');
  }
}

const VECTOR_MISSING = 'VECTOR_EXTENSION_MISSING';
const defs = functions as readonly FnDef[];
const RUNS = 25;

describe('fuzzed bodies never produce a 5xx', () => {
  for (const def of defs) {
    it(def.name, async () => {
      const noVector =
        needsVector.has(def.name as keyof typeof validBodies) && !t.deps.db.features.has('vector');
      const valid = validBodies[def.name as keyof typeof validBodies](ctx);
      const kind = def.auth.kind === 'none' ? null : def.auth.kind;
      await fc.assert(
        fc.asyncProperty(mutated(valid), fc.boolean(), async (body, withCredential) => {
          let token = withCredential && kind ? creds[kind] : undefined;
          // Logging out would end the fuzzing of this token: give revokeTokenForCli a throw-away one.
          if (token && def.name === 'revokeTokenForCli')
            token = (await issuePersonalToken(t.deps, ownerId, 'x')).token;
          const raw = typeof body === 'object' && body && 'raw' in body ? String(body.raw) : undefined;
          const res = await t.call(def.name, raw ?? body, token);
          assertSane(res, `${def.name} ${JSON.stringify(body)?.slice(0, 200)}`, noVector);
        }),
        { numRuns: RUNS },
      );
      // The valid body itself works with the right credential (the property is not vacuous).
      let token = kind ? creds[kind] : undefined;
      if (def.name === 'revokeTokenForCli') token = (await issuePersonalToken(t.deps, ownerId, 'x')).token;
      const fresh = {
        ...ctx,
        code: (await mintLoginCode(t.deps, { userId: ownerId, label: 'v' })).code,
      };
      const body = validBodies[def.name as keyof typeof validBodies](fresh);
      const ok = await t.call(def.name, body, token);
      const expected = noVector ? 503 : (expectedNon200[def.name as keyof typeof expectedNon200] ?? 200);
      expect(ok.statusCode, `${def.name}: ${ok.body}`).toBe(expected);
    });
  }
});
