import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from './harness.ts';
import {
  emptyStats,
  invalidRequests,
  judge,
  operations,
  responseValidator,
  send,
  validRequests,
} from './openapi-fuzz-kit.ts';
import { type Fixture, fuzzAppOptions, fuzzFixture } from './openapi-fuzz-setup.ts';

// Every operation of both OpenAPI documents, sent schema-derived valid and invalid requests with the right
// credential, none, or a wrong one: no 5xx, every error in the envelope, every status documented, every 2xx
// body matching its documented schema. A fixed seed and a few runs per operation keep it deterministic and
// quick; bench/api-fuzz.ts runs the same checks at length. Nothing is excluded from the envelope check: the
// OAuth server's endpoints (/oauth/token and the rest, errors in RFC 6749's shape) are in neither document;
// the fn functions about OAuth consent answer the envelope like any other. Exclusions from the other checks
// are named where they are made (openapi-fuzz-kit.ts: the passthrough's open statuses).

const SEED = 30;
const VALID_RUNS = 5;
const INVALID_RUNS = 5;

// Shares of operations that must answer some 2xx to a generated request: 48 of 93 and 58 of 118 measured.
const MIN_REACHED = { fn: 0.45, v1: 0.4 };

let t: TestApp;
let fx: Fixture;
beforeAll(async () => {
  t = await testApp(fuzzAppOptions);
  fx = await fuzzFixture(t);
});
afterAll(async () => {
  await fx?.close();
  await t?.close();
});

// The documents are read from the running app in beforeAll; the operations are listed from a first app here.
const listing = await (async () => {
  const app = await testApp();
  try {
    const get = async (url: string) => (await app.app.inject({ method: 'GET', url })).json();
    return {
      fn: operations(await get('/api/fn/openapi.json')),
      v1: operations(await get('/v1/openapi.json')),
    };
  } finally {
    await app.close();
  }
})();

for (const which of ['fn', 'v1'] as const) {
  describe(`${which} OpenAPI document, fuzzed`, () => {
    const totals = emptyStats();
    const reached = new Set<string>();
    for (const [i, listed] of listing[which].entries()) {
      it(`${listed.method} ${listed.path}`, async () => {
        const o = operations(fx.docs[which])[i]!;
        const check = responseValidator(fx.docs[which]);
        const hints = fx.hintsFor(o);
        const cases = [
          ...fc.sample(validRequests(o, hints), { numRuns: VALID_RUNS, seed: SEED + i }),
          ...fc.sample(invalidRequests(o, hints), { numRuns: INVALID_RUNS, seed: SEED + i }),
        ];
        const problems: string[] = [];
        for (const r of cases) {
          const res = await send(t.app, o, r, await fx.credentialFor(o));
          problems.push(...judge(o, r, res, check, totals, fx.allowed5xx));
          if (res.statusCode < 300) reached.add(`${o.method} ${o.path}`);
        }
        expect(problems).toEqual([]);
      });
    }

    // Not vacuous: most operations answered a 2xx to some generated request, and those bodies were checked.
    it('reached the handlers', () => {
      console.log(
        `${which}: ${listing[which].length} operations, ${totals.requests} requests, ${reached.size} reached a 2xx, ` +
          `${totals.checked2xx} 2xx bodies checked, ${totals.errors} errors (${totals.enveloped} enveloped)`,
      );
      expect(reached.size / listing[which].length).toBeGreaterThan(MIN_REACHED[which]);
      expect(totals.checked2xx).toBeGreaterThan(0);
    });
  });
}
