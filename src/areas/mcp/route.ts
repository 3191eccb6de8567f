import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Caller } from '../../core/auth/caller.ts';
import { bearerFrom } from '../../core/auth/format.ts';
import { errorBody, errors } from '../../core/errors.ts';
import type { Deps } from '../../deps.ts';
import type { FnDef } from '../../http/fn-kit.ts';
import type { AreaManifest } from '../manifest.ts';
import { DEPLOY_TOOL, usableBy, visibleTools } from './access.ts';
import { deployTool, deployToolDef } from './deploy-tool.ts';
import {
  answerJson,
  answerObject,
  type CallContext,
  callTool,
  errorResult,
  type ToolAnswer,
  toolError,
} from './dispatch.ts';
import { checkToolNames, deriveTools, OPERATION_META, proxyTools, type Tool } from './tools.ts';

// {base}/mcp: the Model Context Protocol over Streamable HTTP, stateless. Each POST gets its own SDK server
// and transport, built around the caller it authenticated; nothing about a client lives between requests,
// so any API node answers any request (docs/decisions/060-mcp-stateless-over-inject.md).

/** The resource an OAuth access token must be bound to (RFC 8707) to be accepted here. */
export function mcpAudience(publicUrl: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/mcp`;
}

const INSTRUCTIONS =
  'Pier: projects, deployments, secrets and the v1 APIs (mail, memory, CDN, integrations, workflows, web ' +
  'data). With a personal token, v1 tools take `organization` (a slug; optional when the token reaches one ' +
  'organization) and act in its sandbox unless `environment` is production. Errors carry the API error code.';

/** Inline files can make a big request; the deploy tool's caps are checked on the decoded files. */
const MCP_BODY_LIMIT = 12 * 1024 * 1024;

function unauthorized(reply: FastifyReply, publicUrl: string, message: string, invalidToken: boolean) {
  // The /mcp resource's own metadata (RFC 9728 §3.1: the resource path appended), which names its audience.
  const meta = `resource_metadata="${publicUrl.replace(/\/+$/, '')}/.well-known/oauth-protected-resource/mcp"`;
  const err = errors.authRequired(message);
  return reply
    .status(401)
    .header('www-authenticate', invalidToken ? `Bearer error="invalid_token", ${meta}` : `Bearer ${meta}`)
    .send(errorBody(err));
}

/** The caller of a bearer not decidable from the header cache; the header is remembered once verified. */
async function verify(deps: Deps, header: string, bearer: string): Promise<Caller | null> {
  const cached = deps.credentials.verifyCached(bearer);
  const v = cached === undefined ? await deps.credentials.verifyCaller(bearer) : cached;
  if (v) deps.credentials.rememberHeader(header, v);
  return v?.caller ?? null;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A single, well-formed `tools/call` request with headers the SDK's transport accepts, or null: anything
 * else (initialize, tools/list, notifications, batches, tasks, a bad header or message) goes to the SDK,
 * which answers it, errors included, as the protocol says.
 */
function plainToolCall(
  req: FastifyRequest,
): { id: string | number; name: string; args: Record<string, unknown> } | null {
  const m = req.body;
  if (!isPlainObject(m) || m.jsonrpc !== '2.0' || m.method !== 'tools/call') return null;
  const id = m.id;
  if (typeof id !== 'string' && !Number.isInteger(id)) return null;
  const p = m.params;
  if (!isPlainObject(p) || typeof p.name !== 'string' || 'task' in p) return null;
  if (p.arguments !== undefined && !isPlainObject(p.arguments)) return null;
  if (p._meta !== undefined && !isPlainObject(p._meta)) return null;
  const accept = req.headers.accept;
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return null;
  if (!/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')) return null;
  const version = req.headers['mcp-protocol-version'];
  if (
    version !== undefined &&
    (typeof version !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(version))
  )
    return null;
  return { id: id as string | number, name: p.name, args: (p.arguments ?? {}) as Record<string, unknown> };
}

function webRequest(req: FastifyRequest, url: string): Request {
  const headers = new Headers();
  for (const name of ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id']) {
    const v = req.headers[name];
    if (typeof v === 'string') headers.set(name, v);
  }
  return new Request(url, { method: req.method, headers });
}

export async function mcpRoutes(
  app: FastifyInstance,
  opts: { deps: Deps; areas: readonly AreaManifest[] },
): Promise<void> {
  const { deps } = opts;
  const publicUrl = deps.config.publicUrl.replace(/\/+$/, '');
  const audience = mcpAudience(publicUrl);
  // One for the process: the SDK would build a new Ajv (costly) for every server, so for every request.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();
  // The model proxy's tools, where the proxy is mounted; their names are reserved everywhere all the same.
  const proxy = proxyTools();
  checkToolNames(opts.areas, [DEPLOY_TOOL, ...proxy.map((t) => t.name)]);
  const proxied = deps.config.roles.includes('proxy') ? proxy : [];
  let derived: { tools: Tool[]; byName: Map<string, Tool> } | undefined;
  // Derived on first use: every area's schemas are loaded by then, and a process that never serves MCP
  // never pays for the JSON Schemas.
  const registry = () => {
    if (!derived) {
      const tools = [...deriveTools(opts.areas), ...proxied];
      const byName = new Map(tools.map((t) => [t.name, t]));
      // The dotted operation ids, the names before they had to match TOOL_NAME_RE, are still answered
      // (not listed) so that configurations and prompts written for them keep working.
      for (const t of tools) if (t.kind === 'v1') byName.set(t.operation, t);
      derived = { tools, byName };
    }
    return derived;
  };

  const fns = new Map(opts.areas.flatMap((a) => a.fns ?? []).map((f) => [f.name, f as FnDef]));
  const fnByName = (name: string) => fns.get(name);

  /** tools/call's answer, whichever way the request came (the SDK's server or the direct path). */
  async function callToolFor(
    ctx: CallContext,
    name: string,
    args: Record<string, unknown>,
  ): Promise<ToolAnswer> {
    if (name === DEPLOY_TOOL && usableBy(ctx.caller, { name, kind: 'deploy' })) {
      return await deployTool(ctx, args).catch(errorResult);
    }
    const tool = registry().byName.get(name);
    if (!tool || !usableBy(ctx.caller, tool)) {
      return toolError('TOOL_NOT_FOUND', `No tool named ${name.slice(0, 128)} for this credential.`);
    }
    return await callTool(ctx, tool, args);
  }

  function serverFor(ctx: CallContext): Server {
    const server = new Server(
      { name: 'pier', title: 'Pier', version: '1.0.0' },
      { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS, jsonSchemaValidator },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => {
      const visible = await visibleTools(deps, ctx.caller, registry().tools);
      const list = visible.tools.map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: t.kind === 'v1' && ctx.caller.kind === 'user' ? t.delegatedInputSchema : t.inputSchema,
        annotations: t.annotations,
        ...(t.kind === 'v1' ? { _meta: { [OPERATION_META]: t.operation } } : {}),
      }));
      if (visible.deploy) list.push(deployToolDef as never);
      return { tools: list };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      return answerObject(await callToolFor(ctx, request.params.name, args)) as never;
    });
    return server;
  }

  app.post('/mcp', { bodyLimit: MCP_BODY_LIMIT }, async (req, reply) => {
    const header = req.headers.authorization;
    // A header verified before (by this endpoint or any other, decision 080): one Map lookup, no parsing.
    const hit = header ? deps.credentials.verifyHeaderCached(header) : undefined;
    let caller: Caller | null;
    if (hit !== undefined) caller = hit?.caller ?? null;
    else {
      const bearer = bearerFrom(header);
      if (!bearer)
        return unauthorized(
          reply,
          publicUrl,
          'Send Authorization: Bearer <token>, or sign in with OAuth.',
          false,
        );
      caller = await verify(deps, header!, bearer);
    }
    if (!caller)
      return unauthorized(reply, publicUrl, 'The token is not valid (unknown, revoked or expired).', true);
    if (caller.kind === 'user' && caller.via === 'oauth' && caller.oauth?.audience !== audience) {
      return unauthorized(reply, publicUrl, `The token was not issued for ${audience}.`, true);
    }
    const ctx: CallContext = {
      deps,
      app,
      caller,
      authorization: header!,
      ip: req.ip,
      log: req.log,
      fnByName,
    };
    const call = plainToolCall(req);
    if (call) {
      // The commonest request, answered without building the SDK's server and transport for it.
      let body: string;
      try {
        // Spliced, not JSON.stringify of an object: a function tool's result is already JSON (dispatch.ts).
        const result = answerJson(await callToolFor(ctx, call.name, call.args));
        body = `{"result":${result},"jsonrpc":"2.0","id":${JSON.stringify(call.id)}}`;
      } catch (err) {
        // As the SDK's server answers a handler that throws: a JSON-RPC internal error.
        req.log.error({ err }, 'MCP tool call failed');
        body = JSON.stringify({
          jsonrpc: '2.0',
          id: call.id,
          error: { code: -32603, message: 'Internal error' },
        });
      }
      return reply.status(200).header('content-type', 'application/json').send(body);
    }
    const server = serverFor(ctx);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    try {
      await server.connect(transport);
      const res = await transport.handleRequest(webRequest(req, audience), { parsedBody: req.body });
      reply.status(res.status);
      res.headers.forEach((v, k) => {
        reply.header(k, v);
      });
      const text = await res.text();
      return reply.send(text);
    } finally {
      await server.close();
    }
  });

  // Stateless: no server-to-client stream to open and no session to end.
  app.route({
    method: ['GET', 'DELETE'],
    url: '/mcp',
    handler: async (_req, reply) => {
      reply.header('allow', 'POST');
      throw errors.methodNotAllowed();
    },
  });
}
