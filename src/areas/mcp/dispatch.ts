import type { FastifyInstance } from 'fastify';
import type { Caller } from '../../core/auth/caller.ts';
import { DELEGATION_HEADER, delegate } from '../../core/auth/delegation.ts';
import { ApiError, errorBody } from '../../core/errors.ts';
import type { Deps } from '../../deps.ts';
import { checkOAuthArgs, narrowToGrant, v1CallerFor } from './access.ts';
import type { FnTool, Tool, V1Tool } from './tools.ts';

// A tool call is a request to the real route, made in-process with app.inject: the same validation, auth
// checks, rate limits and error envelope as over HTTP, with no second code path to keep in step
// (docs/decisions/060-mcp-stateless-over-inject.md).

export type CallContext = {
  deps: Deps;
  app: FastifyInstance;
  caller: Caller;
  /** The bearer as sent, passed on when the route accepts it as is. */
  authorization: string;
  ip: string;
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

/** structuredContent plus a short text: the JSON itself when small, else its start and a note. */
export function okResult(value: unknown, wraps: boolean): ToolResult {
  const structured = (wraps ? { result: value } : value) as Record<string, unknown>;
  const json = JSON.stringify(value);
  const text =
    json.length <= TEXT_LIMIT
      ? json
      : `${json.slice(0, TEXT_LIMIT)}… (${json.length} characters; the whole result is in structuredContent)`;
  return { content: [{ type: 'text', text }], structuredContent: structured };
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

async function callFn(ctx: CallContext, tool: Pick<FnTool, 'name'>, args: Record<string, unknown>) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  let release = () => {};
  if (ctx.caller.kind === 'user' && ctx.caller.oauth) {
    await checkOAuthArgs(ctx.deps, ctx.caller, args);
    // The OAuth token was checked here (audience, grant); the route gets the resolved caller.
    const d = delegate(ctx.caller);
    headers[DELEGATION_HEADER] = d.value;
    release = d.release;
  } else headers.authorization = ctx.authorization;
  try {
    return await ctx.app.inject({
      method: 'POST',
      url: `/api/fn/${tool.name}`,
      headers,
      payload: JSON.stringify(args),
      remoteAddress: ctx.ip,
    });
  } finally {
    release();
  }
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
  return resultOf(await callFn(ctx, { name }, args), { name });
}

/** Calls one tool; every failure the caller can act on comes back as a tool error. */
export async function callTool(
  ctx: CallContext,
  tool: Tool,
  args: Record<string, unknown>,
): Promise<ToolResult> {
  try {
    const res = tool.kind === 'fn' ? await callFn(ctx, tool, args) : await callV1(ctx, tool, args);
    if ('content' in res) return res;
    const out = resultOf(res, tool);
    if ('content' in out) return out;
    const value =
      tool.kind === 'fn' && ctx.caller.kind === 'user'
        ? await narrowToGrant(ctx.deps, ctx.caller, tool.name, out.ok)
        : out.ok;
    return okResult(value, tool.wrapsResult);
  } catch (err) {
    return errorResult(err);
  }
}
