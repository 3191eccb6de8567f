import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../test/harness.ts';
import { catalogueStatus } from '../core/errors.ts';
import { MAX_PARAM_LENGTH } from './framework-errors.ts';

// Both OpenAPI documents declare what the framework answers before an operation runs (413/415 with a
// body, 414 with a path parameter) and the rate limit's 429, each with the error envelope.

type Operation = {
  operationId?: string;
  requestBody?: unknown;
  parameters?: { in: string; name: string; schema?: { maxLength?: number } }[];
  responses: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }>;
};
type Doc = { paths: Record<string, Record<string, Operation>> };

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});

function operations(doc: Doc): [string, Operation][] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(
      ([method, op]) => [`${method.toUpperCase()} ${path}`, op] as [string, Operation],
    ),
  );
}

function isEnvelope(op: Operation, status: number): boolean {
  const schema = op.responses[String(status)]?.content?.['application/json']?.schema as
    | { properties?: { error?: { properties?: Record<string, unknown> } } }
    | undefined;
  const error = schema?.properties?.error?.properties;
  return Boolean(error?.code && error?.message);
}

function missing(doc: Doc): string[] {
  const out: string[] = [];
  for (const [name, op] of operations(doc)) {
    // An operation documented without its errors answers another service's statuses (the passthrough).
    if (!op.responses['400']) continue;
    const want = [429];
    if (op.requestBody) want.push(413, 415);
    if (op.parameters?.some((p) => p.in === 'path')) want.push(414);
    for (const s of want) if (!isEnvelope(op, s)) out.push(`${name} ${s}`);
  }
  return out;
}

describe('OpenAPI error statuses', () => {
  it('the v1 document declares 413, 414, 415 and 429 where they can happen', async () => {
    const doc = (await t.app.inject({ url: '/v1/openapi.json' })).json() as Doc;
    const ops = operations(doc);
    expect(ops.some(([, op]) => op.requestBody)).toBe(true);
    expect(ops.some(([, op]) => op.parameters?.some((p) => p.in === 'path'))).toBe(true);
    expect(missing(doc)).toEqual([]);
    expect(ops.filter(([, op]) => !op.responses['400']).map(([name]) => name)).toEqual([
      'POST /v1/integrations/passthrough',
    ]);
    // No path parameter the document allows is long enough for the router's 414.
    const tooLong = ops.flatMap(([name, op]) =>
      (op.parameters ?? [])
        .filter(
          (p) => p.in === 'path' && (p.schema?.maxLength ?? Number.POSITIVE_INFINITY) > MAX_PARAM_LENGTH,
        )
        .map((p) => `${name} ${p.name}`),
    );
    expect(tooLong).toEqual([]);
    // A bodiless GET does not claim a 413.
    const get = ops.find(([name, op]) => name.startsWith('GET ') && !op.requestBody)!;
    expect(get[1].responses['413']).toBeUndefined();
  });

  it("declares the status of every error code an operation lists, from the code's catalogue", async () => {
    const doc = (await t.app.inject({ url: '/v1/openapi.json' })).json() as Doc;
    const ops = new Map(operations(doc));
    // The document operation lists DOCUMENT_UNSUPPORTED, a 422 (not one of the statuses every operation has).
    expect(ops.get('POST /v1/webdata/documents')?.responses['422']).toBeDefined();
    expect(catalogueStatus('DOCUMENT_UNSUPPORTED')).toBe(422);
  });

  it('the function API document declares 413, 415 and 429 on every function', async () => {
    const doc = (await t.app.inject({ url: '/api/fn/openapi.json' })).json() as Doc;
    const ops = operations(doc);
    expect(ops.length).toBeGreaterThan(50);
    expect(ops.every(([, op]) => op.requestBody)).toBe(true);
    expect(missing(doc)).toEqual([]);
  });
});
