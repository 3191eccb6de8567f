import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Caller } from '../../core/auth/caller.ts';
import { DELEGATION_HEADER, delegate } from '../../core/auth/delegation.ts';
import { ApiError, errorBody } from '../../core/errors.ts';
import type { Deps } from '../../deps.ts';
import { callFunction } from '../../http/fn-call.ts';
import type { FnDef } from '../../http/fn-kit.ts';
import { checkOAuthArgs, narrowToGrant, v1CallerFor } from './access.ts';
import type { Tool, V1Tool } from './tools.ts';

// A v1 tool call is a request to the real route, made in-process with app.inject: the same validation, auth
// checks, rate limits, idempotency and error envelope as over HTTP (docs/decisions/060). A function tool
// goes through the function route's own shared path instead (docs/decisions/084).

export type CallContext = {
  deps: Deps;
  app: FastifyInstance;
  caller: Caller;
  /** The bearer as sent, passed on when the route accepts it as is. */
  authorization: string;
  ip: string;
  /** The /mcp request's logger (functions log through it, as through their own request's). */
  log: FastifyBaseLogger;
  /** Every function of the areas by name (tools or not: the deploy tool calls a few). */
  fnByName: (name: string) => FnDef | undefined;
};

export type ToolResult = {
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
};

const TEXT_LIMIT = 4000;

/** Where a tool error's envelope travels (clients check structuredContent against the output schema). */
export const ERROR_META = 'dev.pier/error';

/**
 * The envelope's code and message as a tool error (never a protocol error): `CODE: message` as text, and
 * the envelope (with any details) in `_meta`, since structuredContent must match the tool's output schema.
 */
export function toolError(code: string, message: string, details: Record<string, unknown> = {}): ToolResult {
  return {
    content: [{ type: 'text', text: `${code}: ${message}` }],
    _meta: { [ERROR_META]: { code, message, ...details } },
    isError: true,
  };
}

export function errorResult(err: unknown): ToolResult {
  if (err instanceof ApiError) {
    const { error } = errorBody(err);
    return toolError(error.code, error.message);
  }
  throw err;
}

/** The short text beside structuredContent: the JSON itself when small, else its start and a note. */
function textOf(json: string): string {
  return json.length <= TEXT_LIMIT
    ? json
    : `${json.slice(0, TEXT_LIMIT)}… (${json.length} characters; the whole result is in structuredContent)`;
}

/** structuredContent plus a short text (textOf). */
export function okResult(value: unknown, wraps: boolean, json = JSON.stringify(value)): ToolResult {
  const structured = (wraps ? { result: value } : value) as Record<string, unknown>;
  return { content: [{ type: 'text', text: textOf(json) }], structuredContent: structured };
}

/**
 * A tool result already encoded as JSON. A function tool's answer is the function's serialised output
 * spliced in twice (structuredContent, and the text as a JSON string), never parsed and re-encoded
 * (docs/decisions/088-mcp-tool-results-spliced-as-json.md).
 */
export class EncodedResult {
  readonly json: string;
  constructor(json: string) {
    this.json = json;
  }
}

export type ToolAnswer = ToolResult | EncodedResult;

/** okResult for a value the function's serializer has already turned into `json`. */
export function okEncoded(json: string, wraps: boolean): EncodedResult {
  const structured = wraps ? `{"result":${json}}` : json;
  return new EncodedResult(
    `{"content":[{"type":"text","text":${JSON.stringify(textOf(json))}}],"structuredContent":${structured}}`,
  );
}

export function answerJson(answer: ToolAnswer): string {
  return answer instanceof EncodedResult ? answer.json : JSON.stringify(answer);
}

export function answerObject(answer: ToolAnswer): ToolResult {
  return answer instanceof EncodedResult ? (JSON.parse(answer.json) as ToolResult) : answer;
}

type Injected = { statusCode: number; body: string; headers: Record<string, unknown> };

function resultOf(res: Injected, tool: Pick<Tool, 'name'>): ToolResult | { ok: unknown } {
  let parsed: unknown;
  try {
    parsed = res.body ? JSON.parse(res.body) : null;
  } catch {
    parsed = null;
  }
  if (res.statusCode >= 400) {
    const env = (parsed as { error?: { code?: string; message?: string } } | null)?.error;
    return toolError(env?.code ?? `HTTP_${res.statusCode}`, env?.message ?? `${tool.name} failed.`);
  }
  return { ok: parsed };
}

/**
 * A function tool goes through the function route's own path (fn-call.ts: authorisation, the compiled input
 * check, the NUL check, the handler and the serializer) with the caller this endpoint resolved; no
 * in-process HTTP request (docs/decisions/084-mcp-function-tools-through-the-route-path.md).
 */
async function callFn(ctx: CallContext, def: FnDef, args: Record<string, unknown>) {
  if (ctx.caller.kind === 'user' && ctx.caller.oauth) await checkOAuthArgs(ctx.deps, ctx.caller, args);
  const res = await callFunction(ctx.deps, def, ctx.caller, args, ctx);
  if (!res.ok) {
    const { error } = errorBody(res.error);
    return toolError(error.code, error.message);
  }
  return res;
}

function v1Request(tool: V1Tool, args: Record<string, unknown>) {
  let url = tool.path;
  for (const p of tool.params) {
    const v = args[p];
    if (v === undefined || v === null || v === '') return { missing: p };
    url = url.replace(`:${p}`, encodeURIComponent(String(v)));
  }
  const qs = new URLSearchParams();
  for (const q of tool.query) {
    const v = args[q];
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) for (const x of v) qs.append(q, String(x));
    else qs.append(q, typeof v === 'object' ? JSON.stringify(v) : String(v));
  }
  const query = qs.toString();
  let body: unknown;
  if (tool.wholeBody) body = args.body;
  else if (tool.body.length) {
    body = Object.fromEntries(tool.body.filter((k) => args[k] !== undefined).map((k) => [k, args[k]]));
  }
  return { url: query ? `${url}?${query}` : url, body };
}

async function callV1(ctx: CallContext, tool: V1Tool, args: Record<string, unknown>) {
  const { organization, environment, ...rest } = args;
  const req = v1Request(tool, ctx.caller.kind === 'user' ? rest : args);
  if ('missing' in req) return toolError('VALIDATION_ERROR', `params.${req.missing}: required.`);
  const headers: Record<string, string> = {};
  let release = () => {};
  if (ctx.caller.kind === 'user') {
    const d = delegate(await v1CallerFor(ctx.deps, ctx.caller, organization, environment));
    headers[DELEGATION_HEADER] = d.value;
    release = d.release;
  } else headers.authorization = ctx.authorization;
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  try {
    return await ctx.app.inject({
      method: tool.method,
      url: req.url,
      headers,
      ...(req.body !== undefined ? { payload: JSON.stringify(req.body) } : {}),
      remoteAddress: ctx.ip,
    });
  } finally {
    release();
  }
}

/** One function by name, as the tools call it: its answer, or the tool error it makes. */
export async function invokeFn(
  ctx: CallContext,
  name: string,
  args: Record<string, unknown>,
): Promise<ToolResult | { ok: unknown }> {
  const def = ctx.fnByName(name);
  if (!def) return toolError('FUNCTION_NOT_FOUND', `No function named ${name}.`);
  const res = await callFn(ctx, def, args);
  return 'content' in res ? res : { ok: JSON.parse(res.json) };
}

/** Calls one tool; every failure the caller can act on comes back as a tool error. */
export async function callTool(
  ctx: CallContext,
  tool: Tool,
  args: Record<string, unknown>,
): Promise<ToolAnswer> {
  try {
    if (tool.kind === 'fn') {
      const res = await callFn(ctx, tool.fn, args);
      if ('content' in res) return res;
      if (ctx.caller.kind === 'user' && ctx.caller.oauth) {
        const value = await narrowToGrant(ctx.deps, ctx.caller, tool.name, JSON.parse(res.json));
        return okResult(value, tool.wrapsResult);
      }
      return okEncoded(res.json, tool.wrapsResult);
    }
    const res = await callV1(ctx, tool, args);
    if ('content' in res) return res;
    const out = resultOf(res, tool);
    if ('content' in out) return out;
    return okResult(out.ok, tool.wrapsResult);
  } catch (err) {
    return errorResult(err);
  }
}
