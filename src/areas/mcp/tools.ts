import { z } from 'zod';
import type { FnDef } from '../../http/fn-kit.ts';
import type { RouteDef, V1Area } from '../../http/v1-kit.ts';
import type { AreaManifest } from '../manifest.ts';

// Tools are derived, never written by hand: one per function-API function and per v1 operation of every
// area's manifest, from the same zod schemas that make the OpenAPI documents. Operator functions and what a
// manifest lists in `notTools` are left out.

type JsonSchema = Record<string, unknown> & { type?: string; properties?: Record<string, unknown> };

export type ToolAnnotations = {
  title?: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
};

type ToolBase = {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
  annotations: ToolAnnotations;
  /** The result is not an object: it travels as `{ result }` (MCP's structuredContent is an object). */
  wrapsResult: boolean;
};

export type FnTool = ToolBase & { kind: 'fn'; fn: FnDef };

export type V1Tool = ToolBase & {
  kind: 'v1';
  method: RouteDef['method'];
  /** Full path template, e.g. /v1/mail/emails/:id */
  path: string;
  params: string[];
  query: string[];
  body: string[];
  /** The body schema is not an object: the whole body is the `body` argument. */
  wholeBody: boolean;
  /** The same tool's input for a user's token: `organization` (and `environment`) added. */
  delegatedInputSchema: JsonSchema;
};

export type Tool = FnTool | V1Tool;

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const out = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-07' }) as JsonSchema;
  delete out.$schema;
  return out;
}

/** MCP wants an object for structured results; anything else is wrapped as `{ result }`. */
function outputOf(schema: z.ZodType): { outputSchema: JsonSchema; wrapsResult: boolean } {
  const s = jsonSchema(schema, 'output');
  if (s.type === 'object') return { outputSchema: s, wrapsResult: false };
  return {
    outputSchema: { type: 'object', properties: { result: s }, required: ['result'] },
    wrapsResult: true,
  };
}

const READ_PREFIXES = ['list', 'get', 'whoami', 'recall', 'search'];
const DESTRUCTIVE_WORDS = ['remove', 'revoke', 'destroy', 'delete', 'cancel', 'rotate'];
const IDEMPOTENT_PREFIXES = ['set', 'remove', 'revoke', 'update', 'destroy', 'delete'];

function firstWord(name: string): string {
  const last = name.split('.').pop() ?? name;
  return (/^[a-z]+/.exec(last)?.[0] ?? last).toLowerCase();
}

function fnAnnotations(fn: FnDef): ToolAnnotations {
  const word = firstWord(fn.name);
  const readOnly = READ_PREFIXES.includes(word);
  return {
    title: fn.summary.split(/(?<=\.)\s/)[0]?.slice(0, 120),
    readOnlyHint: readOnly,
    destructiveHint: !readOnly && DESTRUCTIVE_WORDS.includes(word),
    idempotentHint: readOnly || IDEMPOTENT_PREFIXES.includes(word),
    openWorldHint: false,
  };
}

function v1Annotations(route: RouteDef): ToolAnnotations {
  const word = firstWord(route.name.split('.').pop() ?? '');
  const readOnly = route.method === 'GET' || (route.method === 'POST' && ['recall', 'search'].includes(word));
  const destructive = route.method === 'DELETE' || DESTRUCTIVE_WORDS.some((w) => route.name.includes(w));
  return {
    title: route.summary.slice(0, 120),
    readOnlyHint: readOnly,
    destructiveHint: !readOnly && destructive,
    idempotentHint: readOnly || route.method === 'PUT' || route.method === 'DELETE',
    // v1 operations reach e-mail recipients, providers and the web.
    openWorldHint: true,
  };
}

function fnTool(fn: FnDef): FnTool {
  const input = jsonSchema(fn.input, 'input');
  return {
    kind: 'fn',
    name: fn.name,
    description: fn.summary,
    inputSchema: input.type === 'object' ? input : { type: 'object', properties: {} },
    annotations: fnAnnotations(fn),
    fn,
    ...outputOf(fn.output),
  };
}

function objectKeys(s: JsonSchema | undefined): string[] {
  return s?.type === 'object' ? Object.keys(s.properties ?? {}) : [];
}

function v1Tool(group: V1Area, route: RouteDef): V1Tool {
  const properties: Record<string, unknown> = {};
  const required = new Set<string>();
  const add = (s: JsonSchema | undefined) => {
    if (!s) return;
    for (const [k, v] of Object.entries(s.properties ?? {})) properties[k] ??= v;
    for (const k of (s.required as string[] | undefined) ?? []) required.add(k);
  };
  const params = route.params ? jsonSchema(route.params, 'input') : undefined;
  const query = route.query ? jsonSchema(route.query, 'input') : undefined;
  const body = route.body ? jsonSchema(route.body, 'input') : undefined;
  const wholeBody = !!body && body.type !== 'object';
  add(params);
  add(query);
  if (wholeBody) properties.body = body;
  else add(body);
  const inputSchema: JsonSchema = { type: 'object', properties, required: [...required] };
  const delegatedInputSchema: JsonSchema = {
    type: 'object',
    properties: {
      ...properties,
      organization: { type: 'string', description: 'Slug of the organization to act in.' },
      environment: {
        type: 'string',
        enum: ['sandbox', 'production'],
        description: 'sandbox (default) or production (owners and admins; for OAuth, only when granted).',
      },
    },
    required: [...required, 'organization'],
  };
  return {
    kind: 'v1',
    name: route.name,
    description: route.description ? `${route.summary}\n\n${route.description}` : route.summary,
    inputSchema,
    delegatedInputSchema,
    annotations: v1Annotations(route),
    method: route.method,
    path: `/v1${group.prefix}${route.url}`,
    params: objectKeys(params),
    query: objectKeys(query),
    body: wholeBody ? [] : objectKeys(body),
    wholeBody,
    ...outputOf(route.response),
  };
}

/** Every tool of the areas, in manifest order; computed once per process (schemas are static). */
export function deriveTools(areas: readonly AreaManifest[]): Tool[] {
  const out: Tool[] = [];
  for (const area of areas) {
    const skip = new Set(area.notTools ?? []);
    for (const fn of area.fns ?? []) {
      if (fn.auth.kind === 'operator' || fn.auth.kind === 'none' || skip.has(fn.name)) continue;
      out.push(fnTool(fn));
    }
    for (const group of area.v1 ?? []) {
      for (const route of group.routes) if (!skip.has(route.name)) out.push(v1Tool(group, route));
    }
  }
  return out;
}
