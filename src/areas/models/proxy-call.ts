import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import { modelErrors } from '../../core/ai/errors.ts';
import type { Usage } from '../../core/ai/models.ts';
import type { ResolvedModel } from '../../core/ai/providers.ts';
import { ApiError } from '../../core/errors.ts';
import type { ApiKeyCaller } from '../../http/v1-kit.ts';
import { type CallSize, sizeOf } from './budgets.ts';
import type { Conversation } from './chat-messages.ts';
import type { ProxyContext } from './proxy-context.ts';

// One proxied call's flow, shared by chat completions and responses: which models to try (the request's
// `model`, then its `models` fallbacks), resolving each for the caller's organization, trying them in turn,
// and recording the usage of the one that answered. Checks before a call (limits) belong in
// resolveTarget, accounting after it in recordUsage.

/** A model the request named, resolved for the caller: `name` as the client wrote it. */
export type Target = { name: string; resolved: ResolvedModel };

/** The models a request names, in the order they are tried (repeats dropped). */
export function modelsOf(body: { model: string; models?: string[] }): string[] {
  return [...new Set([body.model, ...(body.models ?? [])])];
}

/** A request's models, in the order they are tried, and its size (for the budget check of each). */
export type CallPlan = { names: string[]; size: CallSize };

export function planOf(
  body: { model: string; models?: string[] },
  request: Parameters<typeof sizeOf>[0],
): CallPlan {
  return { names: modelsOf(body), size: sizeOf(request) };
}

/**
 * Resolves one model for the caller (organization key first, platform key second; cached 10 s), then checks
 * the key's allow-list and the budgets for a call of this size (403 MODEL_NOT_ALLOWED, 402 BUDGET_EXCEEDED).
 */
export async function resolveTarget(
  ctx: ProxyContext,
  caller: ApiKeyCaller,
  name: string,
  size: CallSize,
): Promise<Target> {
  const resolved = await ctx.resolve(caller.orgId, name);
  const model = `${resolved.provider}/${resolved.model}`;
  await ctx.guard({ orgId: caller.orgId, keyId: caller.keyId, model, requested: name, ...size });
  return { name, resolved };
}

/** Whether the next model may do better: the provider failed, was unreachable, rate limited or has no key. */
function fallsBack(err: unknown): boolean {
  if (!(err instanceof ApiError)) return false;
  return (
    err.status >= 500 || err.code === 'MODEL_PROVIDER_RATE_LIMITED' || err.code === 'MODEL_NOT_AVAILABLE'
  );
}

/**
 * Runs `call` on each named model in turn until one answers. A request error (4xx other than a rate limit)
 * stops at once: another model would refuse it too. The last model's failure is the answer.
 */
export async function withFallbacks<T>(
  ctx: ProxyContext,
  caller: ApiKeyCaller,
  { names, size }: CallPlan,
  call: (t: Target) => Promise<T>,
): Promise<{ target: Target; value: T }> {
  for (const [i, name] of names.entries()) {
    try {
      const target = await resolveTarget(ctx, caller, name, size);
      return { target, value: await call(target) };
    } catch (err) {
      if (i === names.length - 1 || !fallsBack(err)) throw err;
      ctx.deps.log.info(
        { model: name, next: names[i + 1], code: (err as ApiError).code },
        'model proxy: falling back',
      );
    }
  }
  throw new Error('unreachable: a request names at least one model');
}

/** Refuses parts the provider cannot take, before any call, naming the provider. */
export function assertProviderTakes(t: Target, conv: Conversation): void {
  const p = t.resolved.provider;
  if (conv.hasAudio && (p === 'anthropic' || p === 'mistral'))
    throw modelErrors.modelCapabilityUnsupported(p, 'audio input (input_audio parts)');
}

/** Adds a call's tokens and cost to the key's usage (buffered, written off the response path). */
export function recordUsage(ctx: ProxyContext, caller: ApiKeyCaller, t: Target, usage: Usage): void {
  ctx.usage.add({
    orgId: caller.orgId,
    keyId: caller.keyId,
    environment: caller.environment,
    model: `${t.resolved.provider}/${t.resolved.model}`,
    usage,
  });
}

/** The header naming the model that answered, as `provider/model`. */
export const MODEL_HEADER = 'x-pier-model';
export const modelHeaderValue = (t: Target) => `${t.resolved.provider}/${t.resolved.model}`;

/** Takes the reply over for a server-sent event stream and writes its status line and headers. */
export function openEventStream(reply: FastifyReply): ServerResponse {
  reply.hijack();
  // A hijacked reply drops the headers set through Fastify (x-request-id, the v1 RateLimit headers, the model).
  const set: Record<string, string | number | string[]> = {};
  for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) set[k] = v;
  reply.raw.writeHead(200, {
    ...set,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  return reply.raw;
}
