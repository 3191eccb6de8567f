import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { catalogueStatus } from '../src/core/errors.ts';
import {
  type Hints,
  hasLoneSurrogate,
  invalid,
  nastyString,
  resolve,
  type Schema,
  validFor,
} from './openapi-arb.ts';

// Drives one OpenAPI operation with schema-derived valid and invalid requests and judges every answer by
// Schemathesis's three checks: not_a_server_error, status_code_conformance, response_schema_conformance,
// plus the error envelope `{ error: { code, message } }` and the 400 for an unpaired surrogate.
// Used by test/openapi-fuzz.test.ts (few runs, in the suite) and bench/api-fuzz.ts (many runs).

export type Doc = { paths: Record<string, Record<string, Operation>>; components?: Schema };
export type Operation = {
  operationId?: string;
  parameters?: { name: string; in: string; required?: boolean; schema: Schema }[];
  requestBody?: { required?: boolean; content?: Record<string, { schema: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
};
export type Op = { doc: Doc; method: string; path: string; op: Operation };

export type Request = {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body?: unknown;
  credential: 'right' | 'none' | 'wrong';
  /** The request holds an unpaired surrogate and the right credential: only 400 is right. */
  surrogate: boolean;
};

export type Stats = {
  requests: number;
  serverErrors: number;
  errors: number;
  enveloped: number;
  checked2xx: number;
  conforming2xx: number;
  reached2xx: number;
  gateway5xx: number;
};
export const emptyStats = (): Stats => ({
  requests: 0,
  serverErrors: 0,
  errors: 0,
  enveloped: 0,
  checked2xx: 0,
  conforming2xx: 0,
  reached2xx: 0,
  gateway5xx: 0,
});

export function operations(doc: Doc): Op[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ doc, method: method.toUpperCase(), path, op })),
  );
}

function jsonBodySchema(op: Operation): Schema | undefined {
  return op.requestBody?.content?.['application/json']?.schema;
}

function paramsOf(op: Operation, where: 'path' | 'query') {
  return (op.parameters ?? []).filter((p) => p.in === where);
}

function record(
  ps: { name: string; required?: boolean; schema: Schema }[],
  root: Schema,
  hints: Hints,
  optional = true,
) {
  const model = Object.fromEntries(ps.map((p) => [p.name, validFor(p.schema, root, hints)]));
  for (const p of ps)
    if (hints[p.name]) model[p.name] = fc.oneof({ weight: 3, arbitrary: hints[p.name]! }, model[p.name]!);
  return fc.record(model, { requiredKeys: ps.filter((p) => p.required || !optional).map((p) => p.name) });
}

/** Requests the operation documents as valid, with the right credential mostly. */
export function validRequests(o: Op, hints: Hints): fc.Arbitrary<Request> {
  const root = o.doc as unknown as Schema;
  const body = jsonBodySchema(o.op);
  return fc.record({
    params: record(paramsOf(o.op, 'path'), root, hints, false),
    query: record(paramsOf(o.op, 'query'), root, hints),
    body: body ? validFor(body, root, hints) : fc.constant(undefined),
    credential: fc.constantFrom<Request['credential']>('right', 'right', 'right', 'right', 'none', 'wrong'),
    surrogate: fc.constant(false),
  });
}

/** Requests with one thing wrong: the body bent, a query or path value out of bounds or odd. */
export function invalidRequests(o: Op, hints: Hints): fc.Arbitrary<Request> {
  const root = o.doc as unknown as Schema;
  const bodySchema = jsonBodySchema(o.op);
  const path = paramsOf(o.op, 'path');
  const query = paramsOf(o.op, 'query');
  return validRequests(o, hints).chain((base) => {
    const bends: fc.Arbitrary<Request>[] = [];
    if (bodySchema)
      bends.push(
        invalid(bodySchema, root, hints).map(({ value, surrogate }) => ({ ...base, body: value, surrogate })),
      );
    else if (o.method !== 'GET') bends.push(fc.jsonValue({ maxDepth: 2 }).map((body) => ({ ...base, body })));
    for (const [where, ps] of [
      ['query', query],
      ['params', path],
    ] as const)
      if (ps.length)
        bends.push(
          fc
            .tuple(
              fc.constantFrom(...ps),
              fc.oneof(nastyString, fc.constantFrom('-1', '1.5', 'true', '999999999999')),
            )
            .map(([p, v]) => ({
              ...base,
              [where]: { ...base[where], [p.name]: v },
              // Only a decodable value can carry a surrogate: the percent-encoded CESU-8 form is refused too.
              surrogate: hasLoneSurrogate(v),
            })),
        );
    if (!bends.length) return fc.constant({ ...base, credential: 'wrong' as const });
    return fc.oneof(...bends).map((r) => ({ ...r, surrogate: r.surrogate && r.credential === 'right' }));
  });
}

/** Percent-encodes a string; an unpaired surrogate becomes its CESU-8 bytes, which no decoder accepts. */
function enc(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.isWellFormed()
    ? encodeURIComponent(s)
    : [...s]
        .map((ch) => {
          const c = ch.charCodeAt(0);
          if (ch.length === 1 && c >= 0xd800 && c <= 0xdfff)
            return `%${(0xe0 | (c >> 12)).toString(16)}%${(0x80 | ((c >> 6) & 0x3f)).toString(16)}%${(0x80 | (c & 0x3f)).toString(16)}`;
          return encodeURIComponent(ch);
        })
        .join('')
        .toUpperCase();
}

export function urlOf(o: Op, r: Request): string {
  const path = o.path.replace(/\{(\w+)\}/g, (_, n: string) => enc(r.params[n] ?? 'x'));
  const q = Object.entries(r.query)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${encodeURIComponent(k)}=${enc(v)}`)
    .join('&');
  return q ? `${path}?${q}` : path;
}

export async function send(
  app: FastifyInstance,
  o: Op,
  r: Request,
  credentials: { right?: string; wrong: string },
) {
  const token =
    r.credential === 'right' ? credentials.right : r.credential === 'wrong' ? credentials.wrong : undefined;
  const hasBody = r.body !== undefined || (o.method !== 'GET' && o.op.requestBody);
  return app.inject({
    method: o.method as 'GET',
    url: urlOf(o, r),
    headers: {
      ...(hasBody ? { 'content-type': 'application/json' } : {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    ...(hasBody ? { payload: r.body === undefined ? '{}' : JSON.stringify(r.body) } : {}),
  });
}

/** Compiles the documented response schemas once per document (ajv, strict off, formats on). */
export function responseValidator(doc: Doc) {
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  const cache = new Map<Schema, ReturnType<Ajv2020['compile']>>();
  return (schema: Schema, value: unknown): string | null => {
    let fn = cache.get(schema);
    if (!fn) {
      fn = ajv.compile({ ...resolve(schema, doc as unknown as Schema), components: doc.components });
      cache.set(schema, fn);
    }
    return fn(value) ? null : ajv.errorsText(fn.errors);
  };
}

/**
 * Operations whose statuses the document leaves open, each for its reason. /v1/integrations/passthrough
 * answers the provider's status as it came, so it declares no answers of its own (a response schema would
 * make Fastify serialize the provider's body); its own refusals still carry the envelope, checked below.
 */
const OPEN_STATUS = new Set(['/v1/integrations/passthrough']);

export type Answer = { statusCode: number; headers: Record<string, unknown>; body: string };

/**
 * Judges one answer; returns the problems (empty when it is right). `allowed5xx` names codes of a 5xx
 * this environment answers where the operation does not declare it (memory without pgvector).
 */
export function judge(
  o: Op,
  r: Request,
  res: Answer,
  check: ReturnType<typeof responseValidator>,
  stats: Stats,
  allowed5xx: ReadonlySet<string> = new Set(),
): string[] {
  const problems: string[] = [];
  const status = res.statusCode;
  stats.requests++;
  let parsed: unknown;
  const isJson = String(res.headers['content-type'] ?? '').includes('application/json');
  if (isJson) {
    try {
      parsed = JSON.parse(res.body);
    } catch {
      problems.push('invalid JSON in an application/json answer');
    }
  }
  const err = (parsed as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  if (status >= 500) {
    // A gateway answer the operation declares (a fetched site failed, no browser, no model provider) is the
    // server telling the truth about something else; any other 5xx is Pier's own failure.
    const code = typeof err?.code === 'string' ? err.code : '';
    const declared = String(status) in (o.op.responses ?? {}) && catalogueStatus(code) === status;
    if (declared || allowed5xx.has(code)) stats.gateway5xx++;
    else {
      stats.serverErrors++;
      problems.push(`5xx`);
    }
  }
  const documented =
    o.op.responses?.[String(status)] ?? o.op.responses?.[`${String(status)[0]}XX`] ?? o.op.responses?.default;
  if (!documented && !OPEN_STATUS.has(o.path)) problems.push(`status ${status} not documented`);
  if (r.surrogate && status !== 400) problems.push(`unpaired surrogate answered ${status}, not 400`);
  if (status >= 400) {
    stats.errors++;
    if (typeof err?.code === 'string' && typeof err.message === 'string') stats.enveloped++;
    else problems.push('error without the { error: { code, message } } envelope');
  }
  if (status >= 200 && status < 300) {
    stats.reached2xx++;
    const schema = documented?.content?.['application/json']?.schema;
    if (schema && isJson && parsed !== undefined) {
      stats.checked2xx++;
      const why = check(schema, parsed);
      if (why) problems.push(`2xx body does not match its schema: ${why}`);
      else stats.conforming2xx++;
    }
  }
  return problems.map(
    (p) =>
      `${o.method} ${o.path} → ${status}: ${p}; sent ${urlOf(o, r).slice(0, 160)} ${JSON.stringify(r.body)?.slice(0, 1000) ?? ''} (${r.credential}); got ${res.body.slice(0, 300)}`,
  );
}
