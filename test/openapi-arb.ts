import fc from 'fast-check';

// JSON Schema (as our OpenAPI documents write it: zod's output, 2020-12 flavoured) → fast-check arbitraries:
// one for values the schema accepts, one for values it refuses. Small on purpose: it covers the keywords the
// two documents use (types and type lists, enum/const, formats, bounds, patterns, required/optional,
// additionalProperties and propertyNames, items, anyOf/oneOf/allOf, $ref), and the fuzzer (openapi-fuzz.test.ts,
// bench/api-fuzz.ts) only needs a value to be plausible, not the whole space.

export type Schema = { [k: string]: unknown };
/** Known things by property or parameter name (a seeded org's slug for `orgSlug`), tried beside generated values. */
export type Hints = Record<string, fc.Arbitrary<unknown>>;

type Ctx = { root: Schema; hints: Hints; depth: number };

const MAX_DEPTH = 5;
// Webdata and integrations fetch what they are given: only addresses that need no DNS, and that a local
// server or the address policy answers at once.
const URIS = ['http://127.0.0.1:9/a', 'http://10.0.0.1/x', 'https://[::1]/', 'http://localhost:1/'];
const ODD_STRINGS = [
  '',
  ' ',
  '\u0000',
  '../../etc/passwd',
  "'; drop table users; --",
  '%00%ff',
  '𝕏'.repeat(40),
  '\u202e\u0301ﾟ',
  'null',
  '1e999',
];

export function resolve(s: Schema, root: Schema): Schema {
  let cur = s;
  for (let i = 0; i < 10 && typeof cur.$ref === 'string'; i++) {
    const ref = cur.$ref as string;
    if (!ref.startsWith('#/')) return {};
    let at: unknown = root;
    for (const part of ref.slice(2).split('/')) at = (at as Schema | undefined)?.[part.replace(/~1/g, '/')];
    cur = (at as Schema) ?? {};
  }
  return cur;
}

function typesOf(s: Schema): string[] {
  if (Array.isArray(s.type)) return s.type as string[];
  if (typeof s.type === 'string') return [s.type];
  if (s.properties || s.additionalProperties || s.required) return ['object'];
  if (s.items) return ['array'];
  return [];
}

function stringArb(s: Schema): fc.Arbitrary<string> {
  const min = (s.minLength as number | undefined) ?? 0;
  const max = Math.min((s.maxLength as number | undefined) ?? 40, Math.max(min, 40));
  const fits = (v: string) => v.length >= min && v.length <= ((s.maxLength as number) ?? Infinity);
  switch (s.format) {
    case 'uuid':
      return fc.uuid({ version: 4 });
    case 'email':
      return fc
        .tuple(
          fc.stringMatching(/^[a-z0-9]{1,12}$/),
          fc.constantFrom('example.com', 'acme.test', 'pier.test'),
        )
        .map(([l, d]) => `${l}@${d}`)
        .filter(fits);
    case 'uri':
    case 'url':
      return fc.constantFrom(...URIS).filter(fits);
    case 'date-time':
      return fc
        .integer({ min: 60_000, max: 20 * 86_400_000 })
        .map((ms) => new Date(Date.now() + ms).toISOString());
    case 'date':
      return fc
        .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
        .map((d) => d.toISOString().slice(0, 10));
  }
  if (typeof s.pattern === 'string') {
    try {
      return fc.stringMatching(new RegExp(s.pattern, 'u'), { size: 'xsmall' }).filter(fits);
    } catch {
      // A pattern the JS engine reads differently: fall through to plain strings, the server will judge.
    }
  }
  return fc.oneof(
    { weight: 4, arbitrary: fc.string({ minLength: min, maxLength: max }) },
    { weight: 1, arbitrary: fc.string({ minLength: min, maxLength: max, unit: 'grapheme' }).filter(fits) },
  );
}

function numberArb(s: Schema, integer: boolean): fc.Arbitrary<number> {
  const exMin = typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum : undefined;
  const exMax = typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum : undefined;
  let min = (s.minimum as number | undefined) ?? (exMin !== undefined ? exMin : -1_000_000);
  let max = (s.maximum as number | undefined) ?? (exMax !== undefined ? exMax : 1_000_000);
  if (integer) {
    min = Math.ceil(exMin !== undefined && min === exMin ? min + 1 : min);
    max = Math.floor(exMax !== undefined && max === exMax ? max - 1 : max);
    return fc.integer({
      min: Math.max(min, Number.MIN_SAFE_INTEGER),
      max: Math.min(max, Number.MAX_SAFE_INTEGER),
    });
  }
  return fc
    .double({ min, max, noNaN: true, noDefaultInfinity: true })
    .filter((v) => (exMin === undefined || v > exMin) && (exMax === undefined || v < exMax));
}

function objectArb(s: Schema, ctx: Ctx): fc.Arbitrary<Record<string, unknown>> {
  const props = (s.properties ?? {}) as Record<string, Schema>;
  const required = new Set((s.required as string[] | undefined) ?? []);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, p] of Object.entries(props)) {
    // Deep optional structure: only the required part, to keep values small.
    if (ctx.depth >= MAX_DEPTH && !required.has(k)) continue;
    model[k] = valid(p, ctx, k);
  }
  const base = fc.record(model, { requiredKeys: [...required].filter((k) => k in model) });
  const extra = s.additionalProperties;
  if (!extra || Object.keys(props).length > 0 || ctx.depth >= MAX_DEPTH) return base;
  const keyArb = s.propertyNames
    ? (valid(s.propertyNames as Schema, ctx) as fc.Arbitrary<string>)
    : fc.string({ minLength: 1, maxLength: 12 });
  const valueArb = extra === true ? fc.jsonValue({ maxDepth: 1 }) : valid(extra as Schema, ctx);
  return fc.dictionary(keyArb, valueArb, { maxKeys: 3 });
}

/** Values the schema accepts (as far as JSON Schema can say). `name` is the property's, for hints. */
export function valid(schema: Schema, ctx: Ctx, name?: string): fc.Arbitrary<unknown> {
  const s = resolve(schema, ctx.root);
  const generated = validOf(s, { ...ctx, depth: ctx.depth + 1 });
  const hint = name ? ctx.hints[name] : undefined;
  return hint ? fc.oneof({ weight: 3, arbitrary: hint }, { weight: 1, arbitrary: generated }) : generated;
}

function validOf(s: Schema, ctx: Ctx): fc.Arbitrary<unknown> {
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
  const branches = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (branches?.length) return fc.oneof(...branches.map((b) => valid(b, ctx)));
  if (Array.isArray(s.allOf)) {
    const merged: Schema = { ...s, allOf: undefined };
    for (const part of s.allOf as Schema[]) {
      const r = resolve(part, ctx.root);
      Object.assign(merged, r, {
        properties: { ...(merged.properties as object), ...(r.properties as object) },
        required: [...((merged.required as string[]) ?? []), ...((r.required as string[]) ?? [])],
      });
    }
    return validOf(merged, ctx);
  }
  const types = typesOf(s);
  if (types.length === 0) return fc.jsonValue({ maxDepth: 1 });
  return fc.oneof(...types.map((t) => typed(t, s, ctx)));
}

function typed(type: string, s: Schema, ctx: Ctx): fc.Arbitrary<unknown> {
  switch (type) {
    case 'string':
      return stringArb(s);
    case 'integer':
      return numberArb(s, true);
    case 'number':
      return numberArb(s, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const min = (s.minItems as number | undefined) ?? 0;
      const max = Math.max(
        min,
        Math.min((s.maxItems as number | undefined) ?? 3, ctx.depth >= MAX_DEPTH ? min : 3),
      );
      return fc.array(s.items ? valid(s.items as Schema, ctx) : fc.jsonValue({ maxDepth: 1 }), {
        minLength: min,
        maxLength: max,
      });
    }
    default:
      return objectArb(s, ctx);
  }
}

/** A value of none of the schema's types (null where null is refused, an object where a string is wanted). */
function wrongType(s: Schema): fc.Arbitrary<unknown> {
  const types = new Set(typesOf(s));
  const candidates: unknown[] = [];
  if (!types.has('string')) candidates.push('x', '');
  if (!types.has('number') && !types.has('integer')) candidates.push(42, -1.5);
  if (!types.has('boolean')) candidates.push(true);
  if (!types.has('null')) candidates.push(null);
  if (!types.has('array')) candidates.push([1, 'a']);
  if (!types.has('object')) candidates.push({ x: 1 });
  // Every type allowed (an empty schema): a wrong value is not possible, a string at least exercises it.
  return fc.constantFrom(...(candidates.length ? candidates : ['x']));
}

/** One value outside the schema's bounds, or a wrong type when it has none. */
function outOfBounds(schema: Schema, root: Schema): fc.Arbitrary<unknown> {
  const s = resolve(schema, root);
  const outs: unknown[] = [];
  if (typeof s.maxLength === 'number') outs.push('y'.repeat(s.maxLength + 1));
  if (typeof s.minLength === 'number' && s.minLength > 0) outs.push('y'.repeat(s.minLength - 1));
  if (typeof s.maximum === 'number') outs.push(s.maximum + 1);
  if (typeof s.minimum === 'number') outs.push(s.minimum - 1);
  if (typesOf(s).includes('integer')) outs.push(1.5);
  if (Array.isArray(s.enum)) outs.push('__not_in_enum__');
  if (typeof s.maxItems === 'number') outs.push(Array.from({ length: s.maxItems + 1 }, () => 'z'));
  return outs.length ? fc.constantFrom(...outs) : wrongType(s);
}

/** A string no server should take quietly: odd unicode, a lone surrogate, or a huge value. */
export const nastyString = fc.oneof(
  fc.constantFrom(...ODD_STRINGS),
  fc.constantFrom('\ud800', 'a\udc00b', '\udfff\ud800'),
  fc.constant('x'.repeat(70_000)),
  fc.string({ unit: 'binary', maxLength: 20 }),
);

export type Invalid = { value: unknown; surrogate: boolean };

/**
 * A valid object bent out of shape: a required key dropped, a value of the wrong type or out of bounds, an
 * unknown key, a nasty string, or a value of another kind altogether. `surrogate` says the result holds an
 * unpaired surrogate, which every route must refuse with a 400.
 */
export function invalid(schema: Schema, root: Schema, hints: Hints): fc.Arbitrary<Invalid> {
  const s = resolve(schema, root);
  const ctx: Ctx = { root, hints, depth: 0 };
  const props = Object.entries((s.properties ?? {}) as Record<string, Schema>);
  const required = (s.required as string[] | undefined) ?? [];
  const plain = (a: fc.Arbitrary<unknown>) =>
    a.map((value) => ({ value, surrogate: hasLoneSurrogate(value) }));
  const whole = plain(fc.oneof(wrongType(s), fc.jsonValue({ maxDepth: 2 }), nastyString));
  if (!typesOf(s).includes('object') || props.length === 0)
    return fc.oneof(whole, plain(outOfBounds(s, root)));
  const base = valid(s, ctx) as fc.Arbitrary<Record<string, unknown>>;
  const keys = props.map(([k]) => k);
  const bends: fc.Arbitrary<unknown>[] = [
    fc
      .tuple(base, fc.constantFrom(...keys))
      .chain(([v, k]) =>
        fc
          .oneof(
            outOfBounds(props.find(([p]) => p === k)![1], root),
            wrongType(resolve(props.find(([p]) => p === k)![1], root)),
            nastyString,
          )
          .map((bad) => ({ ...v, [k]: bad })),
      ),
    fc
      .tuple(base, fc.string({ minLength: 1, maxLength: 10 }), fc.jsonValue({ maxDepth: 1 }))
      .map(([v, k, x]) => ({
        ...v,
        [`${k}_unknown`]: x,
      })),
  ];
  if (required.length)
    bends.push(
      fc.tuple(base, fc.constantFrom(...required)).map(([v, k]) => {
        const { [k]: _, ...rest } = v;
        return rest;
      }),
    );
  return fc.oneof(whole, plain(fc.oneof(...bends)));
}

export function hasLoneSurrogate(v: unknown): boolean {
  if (typeof v === 'string') return !v.isWellFormed();
  if (Array.isArray(v)) return v.some(hasLoneSurrogate);
  if (v && typeof v === 'object')
    return Object.entries(v).some(([k, x]) => !k.isWellFormed() || hasLoneSurrogate(x));
  return false;
}

export function validFor(schema: Schema, root: Schema, hints: Hints): fc.Arbitrary<unknown> {
  return valid(schema, { root, hints, depth: 0 });
}
