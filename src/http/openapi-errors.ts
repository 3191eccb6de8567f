import { createJsonSchemaTransform } from 'fastify-type-provider-zod';
import type { z } from 'zod';

// The statuses the framework answers before an operation runs (framework-errors.ts, error-handler.ts),
// declared on every operation where they can happen, so a client or a fuzzer reading the document is not
// surprised: 413 and 415 where there is a body, 414 where there is a path parameter. Routes keep their own
// declarations (429 and the rest come from fn-route.ts and v1-kit.ts).

type Transform = ReturnType<typeof createJsonSchemaTransform>;
type RouteSchema = { hide?: boolean; body?: unknown; params?: unknown; response?: Record<string, unknown> };

/** Which framework statuses a route can answer. */
export function frameworkStatuses(url: string, schema: RouteSchema): number[] {
  const out: number[] = [];
  if (schema.body) out.push(413, 415);
  if (schema.params || /[:*]/.test(url)) out.push(414);
  return out;
}

/** createJsonSchemaTransform with the framework's error statuses added to each documented operation. */
export function openApiTransform(skipList: string[], envelope: z.ZodType): Transform {
  const inner = createJsonSchemaTransform({ skipList });
  return (input) => {
    const schema = input.schema as RouteSchema | undefined;
    // A route that declares no answers (the integrations passthrough answers the provider's) stays open.
    if (!schema?.response || schema.hide) return inner(input);
    const added = Object.fromEntries(frameworkStatuses(input.url, schema).map((s) => [s, envelope]));
    return inner({ ...input, schema: { ...schema, response: { ...added, ...schema.response } } as never });
  };
}
