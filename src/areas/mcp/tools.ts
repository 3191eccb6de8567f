import { z } from 'zod';
import type { FnDef } from '../../http/fn-kit.ts';
import type { RouteDef, V1Area } from '../../http/v1-kit.ts';
import type { AreaManifest } from '../manifest.ts';
import { chatBody, chatCompletionSchema } from '../models/index.ts';
import { type JsonSchema, leanSchema } from './lean-schema.ts';

// Tools are derived, never written by hand: one per function-API function and per v1 operation of every
// area's manifest, from the same zod schemas that make the OpenAPI documents. Operator functions and what a
// manifest lists in `notTools` are left out.

/** What Claude Desktop, the OpenAI API and most clients accept as a tool name. */
export const TOOL_NAME_RE = /^[a-zA-Z0-9_-]{1,64}$/;

/** Where a v1 tool's `_meta` keeps the operation id it stands for (`mail.send`). */
export const OPERATION_META = 'dev.pier/operation';

/** A v1 operation id as a tool name: dots become underscores (`mail.send` → `mail_send`). */
export function toolName(operation: string): string {
  return operation.replaceAll('.', '_');
}

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
  annotations: Partial<ToolAnnotations>;
  /** The result is not an object: it travels as `{ result }` (MCP's structuredContent is an object). */
  wrapsResult: boolean;
};

export type FnTool = ToolBase & { kind: 'fn'; fn: FnDef };

export type V1Tool = ToolBase & {
  kind: 'v1';
  /** The operation id, dotted (`mail.send`): the tool's name before names had to match TOOL_NAME_RE. */
  operation: string;
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
  return leanSchema(out, io) as JsonSchema;
}

/**
 * MCP wants an object for structured results; anything else is wrapped as `{ result }`. No output schema is
 * listed: the clients agents run in do not give it to the model, and it was half of tools/list's bytes
 * (docs/mcp.md "Tools"); the response schemas are in the OpenAPI documents.
 */
function wrapsResult(schema: z.ZodType): boolean {
  return jsonSchema(schema, 'output').type !== 'object';
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

/** What a v1 tool is made from: a `defineRoute` operation, or one a hand-written plugin describes. */
type Operation = Pick<
  RouteDef,
  | 'method'
  | 'url'
  | 'name'
  | 'summary'
  | 'description'
  | 'params'
  | 'query'
  | 'body'
  | 'response'
  | 'toolBody'
>;

function v1Annotations(route: Operation): ToolAnnotations {
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

/** MCP's defaults for the hints: a client reads a missing hint as this value. */
export const HINT_DEFAULTS = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
} as const;

/**
 * The annotations as sent: tools/list is read into every session's context, so a title that only repeats the
 * description and a hint at MCP's default are left out (the same meaning, fewer bytes).
 */
function leanAnnotations(annotations: ToolAnnotations, description: string): Partial<ToolAnnotations> {
  const out: Partial<ToolAnnotations> = {};
  if (annotations.title !== undefined && annotations.title !== description) out.title = annotations.title;
  for (const k of Object.keys(HINT_DEFAULTS) as (keyof typeof HINT_DEFAULTS)[]) {
    if (annotations[k] !== HINT_DEFAULTS[k]) out[k] = annotations[k];
  }
  return out;
}

function fnTool(fn: FnDef): FnTool {
  const input = jsonSchema(fn.input, 'input');
  return {
    kind: 'fn',
    name: fn.name,
    description: fn.summary,
    inputSchema: input.type === 'object' ? input : { type: 'object', properties: {} },
    annotations: leanAnnotations(fnAnnotations(fn), fn.summary),
    fn,
    wrapsResult: wrapsResult(fn.output),
  };
}

function objectKeys(s: JsonSchema | undefined): string[] {
  return s?.type === 'object' ? Object.keys(s.properties ?? {}) : [];
}

/** What a user's token adds to a v1 tool's arguments; kept short, since every v1 tool repeats it. */
const DELEGATED_PROPERTIES = {
  organization: { type: 'string', description: 'Organization slug, when you reach several.' },
  environment: {
    type: 'string',
    enum: ['sandbox', 'production'],
    description: 'Default sandbox.',
  },
};

/** The summary and the description's first paragraph: the rest is in the API reference. */
function shortDescription(route: Operation): string {
  const first = route.description?.split(/\n\s*\n/)[0]?.trim();
  return first ? `${route.summary}\n\n${first}` : route.summary;
}

function v1Tool(group: Pick<V1Area, 'prefix'>, route: Operation): V1Tool {
  const properties: Record<string, unknown> = {};
  const required = new Set<string>();
  const add = (s: JsonSchema | undefined) => {
    if (!s) return;
    for (const [k, v] of Object.entries(s.properties ?? {})) properties[k] ??= v;
    for (const k of (s.required as string[] | undefined) ?? []) required.add(k);
  };
  const params = route.params ? jsonSchema(route.params, 'input') : undefined;
  const query = route.query ? jsonSchema(route.query, 'input') : undefined;
  const bodySchema = route.toolBody ?? route.body;
  const body = bodySchema ? jsonSchema(bodySchema, 'input') : undefined;
  const wholeBody = !!body && body.type !== 'object';
  add(params);
  add(query);
  if (wholeBody) properties.body = body;
  else add(body);
  const req = required.size ? { required: [...required] } : {};
  const inputSchema: JsonSchema = { type: 'object', properties, ...req };
  const delegatedInputSchema: JsonSchema = {
    type: 'object',
    properties: { ...properties, ...DELEGATED_PROPERTIES },
    ...req,
  };
  return {
    kind: 'v1',
    name: toolName(route.name),
    operation: route.name,
    description: shortDescription(route),
    inputSchema,
    delegatedInputSchema,
    annotations: leanAnnotations(v1Annotations(route), shortDescription(route)),
    method: route.method,
    path: `/v1${group.prefix}${route.url}`,
    params: objectKeys(params),
    query: objectKeys(query),
    body: wholeBody ? [] : objectKeys(body),
    wholeBody,
    wrapsResult: wrapsResult(route.response),
  };
}

/** The functions and v1 operations of the areas that are tools, in manifest order (no schema built). */
function toolSources(areas: readonly AreaManifest[]) {
  const out: ({ fn: FnDef } | { group: V1Area; route: RouteDef })[] = [];
  for (const area of areas) {
    const skip = new Set(area.notTools ?? []);
    for (const fn of area.fns ?? []) {
      if (fn.auth.kind === 'operator' || fn.auth.kind === 'none' || skip.has(fn.name)) continue;
      out.push({ fn });
    }
    for (const group of area.v1 ?? []) {
      for (const route of group.routes) if (!skip.has(route.name)) out.push({ group, route });
    }
  }
  return out;
}

/**
 * Throws unless every tool name matches TOOL_NAME_RE and no two tools (`reserved` ones included, the deploy
 * tool) share one: a function named `mail_send` would shadow the v1 operation `mail.send`. Cheap (names
 * only), so it runs when the route is registered and a bad manifest stops the process at start-up.
 */
export function checkToolNames(areas: readonly AreaManifest[], reserved: readonly string[] = []): void {
  const seen = new Map<string, string>(reserved.map((n) => [n, n]));
  for (const src of toolSources(areas)) {
    const source = 'fn' in src ? src.fn.name : src.route.name;
    const name = 'fn' in src ? src.fn.name : toolName(src.route.name);
    if (!TOOL_NAME_RE.test(name)) {
      throw new Error(
        `MCP tool name ${JSON.stringify(name)} (from ${source}) does not match ${TOOL_NAME_RE}.`,
      );
    }
    const other = seen.get(name);
    if (other !== undefined)
      throw new Error(`MCP tool name ${name} is taken twice: by ${other} and ${source}.`);
    seen.set(name, source);
  }
}

/**
 * Tools for operations of hand-written v1 plugins (no `defineRoute` to derive them from). The model proxy's
 * chat completions, without streaming (a tool answers once); embeddings and the integrations pass-through
 * are not tools (docs/mcp.md "Tools"). Listed only where the proxy is mounted (role `proxy`).
 */
export function proxyTools(): V1Tool[] {
  const body = chatBody
    .omit({
      stream: true,
      stream_options: true,
      tools: true,
      tool_choice: true,
      parallel_tool_calls: true,
      n: true,
    })
    .extend({
      // Text only: an agent's MCP client sends words, and the full message union (images, audio, tool turns)
      // would cost the tool list ~3 KB that every session pays.
      messages: z
        .array(z.object({ role: z.enum(['system', 'user', 'assistant']), content: z.string() }))
        .min(1)
        .max(1000),
    });
  return [
    v1Tool(
      { prefix: '/ai' },
      {
        method: 'POST',
        url: '/chat/completions',
        name: 'ai.chatCompletions',
        summary: "Asks one of the organization's models (OpenAI chat completions format, not streamed).",
        description:
          '`model` as the proxy takes it (`gpt-4o-mini`, `anthropic/claude-sonnet-4-5`); the tokens count in the organization’s model usage.',
        body,
        response: chatCompletionSchema,
      },
    ),
  ];
}

/** Every tool of the areas, in manifest order; computed once per process (schemas are static). */
export function deriveTools(areas: readonly AreaManifest[]): Tool[] {
  return toolSources(areas).map((src) => ('fn' in src ? fnTool(src.fn) : v1Tool(src.group, src.route)));
}
