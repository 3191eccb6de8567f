// What a tool's JSON Schemas carry into an agent's context. tools/list is read into the model's context by
// every client, so what only a validator uses is left out: the route checks every input again, and an
// output schema is there to say what comes back, not to re-validate Pier's own answers.

export type JsonSchema = Record<string, unknown> & { type?: string; properties?: Record<string, unknown> };

/** Validation-only keywords, meaningless for a result Pier produced itself. */
const OUTPUT_ONLY_CHECKS = new Set([
  'pattern',
  'format',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minItems',
  'maxItems',
  'multipleOf',
  'default',
]);

/**
 * Bounds that only guard the server (a 100,000-character prompt, a 3,600,000 ms back-off): the route checks
 * them again with a clear 400, and a model never comes near them, so in an input schema they are dropped.
 * Bounds a model could meet (a 64-character id, 20 items) stay.
 */
const GUARD_BOUNDS: Record<string, number> = { maxLength: 200, maxItems: 100, maximum: 1_000_000 };

function isGuardBound(k: string, v: unknown): boolean {
  const at = GUARD_BOUNDS[k];
  return at !== undefined && typeof v === 'number' && v >= at;
}

/** Keywords whose value is data (or names), never a schema to walk into. */
const VERBATIM = new Set(['enum', 'const', 'default', 'examples', 'required', 'description', 'title']);

/** Keywords whose value maps names to schemas. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions']);

function isEmptyObject(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;
}

function isJustString(v: unknown): boolean {
  return (
    typeof v === 'object' &&
    v !== null &&
    Object.keys(v).length === 1 &&
    (v as { type?: unknown }).type === 'string'
  );
}

function mapValues(v: Record<string, unknown>, f: (x: unknown) => unknown): Record<string, unknown> {
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, f(x)]));
}

/**
 * The schema without what a client or model gains nothing from: a `pattern` beside a `format` (zod writes
 * both for uuids and e-mails), `propertyNames: { type: "string" }` and `additionalProperties: {}` (the
 * defaults), in an input schema the bounds that only guard the server, and in an output schema every check a
 * validator alone uses and `additionalProperties: false`.
 */
export function leanSchema(node: unknown, io: 'input' | 'output'): unknown {
  if (Array.isArray(node)) return node.map((n) => leanSchema(n, io));
  if (typeof node !== 'object' || node === null) return node;
  const s = node as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    if (io === 'output' && OUTPUT_ONLY_CHECKS.has(k)) continue;
    if (io === 'input' && isGuardBound(k, v)) continue;
    if (k === 'pattern' && typeof s.format === 'string') continue;
    if (k === 'propertyNames' && isJustString(v)) continue;
    if (k === 'additionalProperties' && (isEmptyObject(v) || (io === 'output' && v === false))) continue;
    if (VERBATIM.has(k)) out[k] = v;
    else if (SCHEMA_MAPS.has(k) && typeof v === 'object' && v !== null) {
      out[k] = mapValues(v as Record<string, unknown>, (x) => leanSchema(x, io));
    } else out[k] = leanSchema(v, io);
  }
  return out;
}
