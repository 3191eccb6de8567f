import fastJson, { type AnySchema } from 'fast-json-stringify';
import type { FastifySchemaCompiler, FastifySerializerCompiler } from 'fastify';
import {
  serializerCompiler as zodSerializer,
  validatorCompiler as zodValidator,
} from 'fastify-type-provider-zod';
import { z } from 'zod';

// Compiled request checks and response serializers for zod schemas that are plain data (objects, strings,
// numbers, booleans, enums, literals, arrays, optional and nullable; no transforms, defaults, unions or
// records). The zod path costs a full parse of the input and of the output on every call; these do the same
// work for plain schemas in a fraction of the time. Anything else keeps the zod path, unchanged.

type Def = {
  type: string;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  element?: z.ZodType;
  innerType?: z.ZodType;
  checks?: {
    _zod: { def: { check: string; format?: string; minimum?: number; maximum?: number; length?: number } };
  }[];
  values?: unknown[];
  entries?: Record<string, unknown>;
  format?: string;
  coerce?: boolean;
};

function defOf(s: z.ZodType): Def {
  return (s as unknown as { _zod: { def: Def } })._zod.def;
}

/** Whether serializing through the schema's JSON Schema gives what zod's encode + JSON.stringify gives. */
export function isPlainOutput(s: z.ZodType, depth = 0): boolean {
  if (depth > 20) return false;
  const d = defOf(s);
  switch (d.type) {
    case 'object':
      // Only stripping objects: fast-json-stringify drops unknown keys, as zod's default object does.
      return d.catchall === undefined && Object.values(d.shape!).every((v) => isPlainOutput(v, depth + 1));
    case 'string':
      // An 'overwrite' check (trim, toLowerCase…) changes the value: not plain.
      return (d.checks ?? []).every((c) => c._zod.def.check !== 'overwrite');
    case 'number':
    case 'boolean':
    case 'enum':
    case 'literal':
      return (d.checks ?? []).every((c) => c._zod.def.check !== 'overwrite');
    case 'array':
      return isPlainOutput(d.element!, depth + 1);
    case 'optional':
    case 'nullable':
      return isPlainOutput(d.innerType!, depth + 1);
    default:
      return false;
  }
}

/** A fast-json-stringify serializer for a plain output schema, or null (keep zod's). */
export function compileFastSerializer(schema: z.ZodType): ((data: unknown) => string) | null {
  if (!isPlainOutput(schema)) return null;
  let json: Record<string, unknown>;
  try {
    json = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'throw' }) as Record<string, unknown>;
  } catch {
    return null;
  }
  delete json.$schema;
  // fast-json-stringify picks an anyOf branch by validating the value (additionalProperties: false then
  // refuses unknown keys, which zod would strip): keep zod for those, and for anything referenced.
  if (/"(anyOf|oneOf|allOf|\$ref|\$defs)"/.test(JSON.stringify(json))) return null;
  return fastJson(json as AnySchema) as (data: unknown) => string;
}

type Check = (v: unknown) => boolean;

function stringCheck(d: Def): Check | null {
  // z.email(), z.uuid()… are strings with a format (checked by the schema itself, not in checks).
  if (d.format || d.coerce) return null;
  let min = 0;
  let max = Number.POSITIVE_INFINITY;
  for (const c of d.checks ?? []) {
    const k = c._zod.def;
    if (k.check === 'min_length') min = Math.max(min, k.minimum!);
    else if (k.check === 'max_length') max = Math.min(max, k.maximum!);
    else if (k.check === 'length_equals') {
      min = Math.max(min, k.length!);
      max = Math.min(max, k.length!);
    } else return null; // formats, regexes, overwrites: zod decides
  }
  return (v) => typeof v === 'string' && v.length >= min && v.length <= max;
}

function compileCheck(s: z.ZodType, depth: number): Check | null {
  if (depth > 10) return null;
  const d = defOf(s);
  switch (d.type) {
    case 'string':
      return stringCheck(d);
    case 'boolean':
      return d.checks?.length || d.coerce ? null : (v) => typeof v === 'boolean';
    case 'optional': {
      const inner = compileCheck(d.innerType!, depth + 1);
      return inner && ((v) => v === undefined || inner(v));
    }
    case 'object': {
      // Only strict objects (zod.strictObject): an unknown key must still be a 400 from zod.
      if (!d.catchall || defOf(d.catchall).type !== 'never') return null;
      const keys = Object.keys(d.shape!);
      const checks: Check[] = [];
      for (const k of keys) {
        const c = compileCheck(d.shape![k]!, depth + 1);
        if (!c) return null;
        checks.push(c);
      }
      const known = new Set(keys);
      return (v) => {
        if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
        const o = v as Record<string, unknown>;
        for (const k in o) if (!Object.hasOwn(o, k) || !known.has(k)) return false;
        for (let i = 0; i < keys.length; i++) if (!checks[i]!(o[keys[i]!])) return false;
        return true;
      };
    }
    default:
      return null;
  }
}

/**
 * A predicate that is true only for input the zod schema accepts unchanged (so its parse would return an
 * equal value), or null when the schema is not that simple. False means "let zod decide", never "invalid":
 * every refusal, with its message, still comes from zod.
 */
export function compileFastCheck(schema: z.ZodType): Check | null {
  return compileCheck(schema, 0);
}

/** Fastify validator compiler: the compiled check first, zod (and its error) when it does not pass. */
export const fastValidatorCompiler: FastifySchemaCompiler<z.ZodType> = (route) => {
  const slow = zodValidator(route);
  const fast = compileFastCheck(route.schema);
  if (!fast) return slow;
  return (data) => (fast(data) ? { value: data } : slow(data));
};

// Compiled once per schema object: the error envelope is shared by every route and status.
const compiled = new WeakMap<z.ZodType, ((data: unknown) => string) | null>();

/** Fastify serializer compiler: fast-json-stringify for plain output schemas, zod's otherwise. */
export const fastSerializerCompiler: FastifySerializerCompiler<z.ZodType> = (route) => {
  let fast = compiled.get(route.schema);
  if (fast === undefined) {
    fast = compileFastSerializer(route.schema);
    compiled.set(route.schema, fast);
  }
  return fast ?? zodSerializer(route);
};
