import fc from 'fast-check';
import { serializerCompiler as zodSerializer } from 'fastify-type-provider-zod';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { validBodies } from '../../test/fn-samples.ts';
import { compileFastCheck, compileFastSerializer } from './fast-schemas.ts';
import type { FnDef } from './fn-kit.ts';
import { functions } from './fn-registry.ts';
import { errorSchema } from './fn-route.ts';

// Property tests of the compiled serializers and request checks against zod, for every function of the
// registry: the same JSON out (unknown fields stripped), and a request the fast check lets through is one zod
// accepts unchanged.

const defs = functions as readonly FnDef[];
const SAMPLE_CTX = {
  orgSlug: 'acme-org',
  orgId: '00000000-0000-4000-8000-000000000000',
  projectSlug: 'acme-app',
  email: 'a@example.com',
  code: 'BCDF-GHJK',
};
type Def = {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  innerType?: z.ZodType;
  entries?: Record<string, string>;
  values?: unknown[];
  checks?: { _zod: { def: { check: string; format?: string } } }[];
};
const defOf = (s: z.ZodType) => (s as unknown as { _zod: { def: Def } })._zod.def;

const extraValue = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant(undefined));

/** Values of a plain output schema, with unknown keys sprinkled into every object. */
function valuesOf(s: z.ZodType): fc.Arbitrary<unknown> {
  const d = defOf(s);
  switch (d.type) {
    case 'string':
      return fc.string({ unit: 'binary', maxLength: 20 });
    case 'number':
      return d.checks?.some((c) => c._zod.def.format === 'safeint')
        ? fc.maxSafeInteger()
        : fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'enum':
      return fc.constantFrom(...Object.values(d.entries!));
    case 'literal':
      return fc.constantFrom(...d.values!);
    case 'nullable':
      return fc.option(valuesOf(d.innerType!), { nil: null });
    case 'optional':
      return fc.option(valuesOf(d.innerType!), { nil: undefined });
    case 'array':
      return fc.array(valuesOf(d.element!), { maxLength: 3 });
    case 'object': {
      const shape = d.shape!;
      const keys = Object.keys(shape);
      const optional = keys.filter((k) => defOf(shape[k]!).type === 'optional');
      const known = fc.record(Object.fromEntries(keys.map((k) => [k, valuesOf(shape[k]!)])), {
        requiredKeys: keys.filter((k) => !optional.includes(k)),
      });
      const extra = fc.dictionary(
        fc.string({ maxLength: 8 }).filter((k) => !keys.includes(k) && k !== '__proto__'),
        extraValue,
        { maxKeys: 3 },
      );
      return fc.tuple(extra, known).map(([x, k]) => ({ ...x, ...k }));
    }
    default:
      throw new Error(`no generator for ${d.type}`);
  }
}

describe('compiled response serializers', () => {
  const compiled = defs.filter((d) => compileFastSerializer(d.output));

  it('cover the hot path and most functions', () => {
    const names = compiled.map((d) => d.name);
    expect(names).toContain('getProjectForCli');
    expect(names).toContain('listMyProjectsForCli');
    expect(compiled.length).toBeGreaterThan(defs.length / 2);
    expect(compileFastSerializer(errorSchema)).not.toBeNull();
  });

  for (const def of [...compiled, { name: 'error envelope', output: errorSchema }]) {
    it(`${def.name}: same JSON as zod, unknown fields stripped`, () => {
      const fast = compileFastSerializer(def.output as z.ZodType)!;
      const slow = zodSerializer({ schema: def.output, method: 'POST', url: def.name } as never);
      fc.assert(
        fc.property(valuesOf(def.output as z.ZodType), (v) => {
          // Values zod itself refuses (a generated string that is not a UUID…) are a handler bug either way.
          fc.pre((def.output as z.ZodType).safeParse(v).success);
          // Same JSON value; only the order of keys may differ (optional ones after required ones).
          expect(JSON.parse(fast(v))).toEqual(JSON.parse(slow(v)));
        }),
        { numRuns: 150 },
      );
    });
  }
});

describe('compiled request checks', () => {
  const checked = defs.filter((d) => compileFastCheck(d.input));

  it('cover the hot path', () => {
    expect(checked.map((d) => d.name)).toContain('getProjectForCli');
  });

  for (const def of checked) {
    it(`${def.name}: passes only what zod accepts unchanged`, () => {
      const fast = compileFastCheck(def.input)!;
      const valid = validBodies[def.name as keyof typeof validBodies](SAMPLE_CTX);
      const near = fc
        .tuple(
          fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
          fc.subarray(Object.keys(valid)),
        )
        .map(([extra, keep]) => ({
          ...Object.fromEntries(keep.map((k) => [k, valid[k]])),
          ...extra,
        }));
      const bent = fc.tuple(fc.constantFrom(...Object.keys(valid), 'x'), fc.jsonValue({ maxDepth: 1 }));
      const body = fc.oneof(
        fc.jsonValue({ maxDepth: 3 }),
        near,
        bent.map(([k, v]) => ({ ...valid, [k]: v })),
        fc.constant(valid),
      );
      fc.assert(
        fc.property(body, (b) => {
          if (!fast(b)) return;
          const parsed = def.input.safeParse(b);
          expect(parsed.success).toBe(true);
          expect(parsed.data).toEqual(b);
        }),
        { numRuns: 300 },
      );
      expect(fast(valid)).toBe(true);
    });
  }
});
