import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Caller } from '../core/auth/caller.ts';
import { type ApiError, errors } from '../core/errors.ts';
import {
  type BucketResult,
  type BucketRule,
  rateLimitPolicy,
  rateLimitState,
  TokenBuckets,
} from '../core/rate-limit/token-buckets.ts';
import type { Deps } from '../deps.ts';

// The function API's token buckets (docs/function-api.md, "Rate limits"): one per credential that resolved
// (personal token, dashboard session, platform credential, operator key; a call the MCP endpoint makes for
// its caller counts against that caller's credential), and one per client address for calls without one
// (public functions such as the login code exchange, and refused credentials). The address is Fastify's
// req.ip, so TRUST_PROXY decides whether a forwarded one counts. The same buckets as v1
// (core/rate-limit/token-buckets.ts): no query for a key this process already knows. One instance per Deps
// (fnRateLimitFor): the MCP endpoint's function tools (fn-call.ts) take from the same buckets as the route.

/** A bucket kind: its rule, its policy's name and its RateLimit-Policy value (made once). */
type Policy = { rule: BucketRule; name: string; header: string };
const policy = (name: string, rule: BucketRule): Policy => ({
  rule,
  name,
  header: rateLimitPolicy(name, rule),
});

type Done = (err?: Error) => void;

const perDeps = new WeakMap<Deps, FnRateLimit>();

/** The function API's buckets of this process (one per Deps, shared by the route and fn-call.ts). */
export function fnRateLimitFor(deps: Deps): FnRateLimit {
  let limit = perDeps.get(deps);
  if (!limit) {
    limit = new FnRateLimit(deps);
    perDeps.set(deps, limit);
  }
  return limit;
}

export class FnRateLimit {
  readonly #buckets: TokenBuckets;
  readonly #perCredential: Policy;
  readonly #perIp: Policy;

  constructor(deps: Deps) {
    this.#buckets = new TokenBuckets(deps.db, deps.clock, {
      onSyncError: (err) => deps.log.warn({ err }, 'fn rate limit: sync to the database failed (retried)'),
    });
    this.#perCredential = policy('fn', deps.config.fnRateLimit.perCredential);
    this.#perIp = policy('fn-ip', deps.config.fnRateLimit.perIp);
  }

  /** Takes a token for this call: done() when allowed, done(RATE_LIMITED) past the budget. Sync when known. */
  check(req: FastifyRequest, reply: FastifyReply, caller: Caller | null, done: Done): void {
    const [key, p] = this.#bucketOf(caller, req.ip);
    const known = this.#buckets.takeKnown(key, p.rule);
    if (known) settle(reply, p, known, done);
    else this.#buckets.take(key, p.rule).then((r) => settle(reply, p, r, done), done);
  }

  /** For a call outside the route (no reply to carry headers): the refusal, or undefined when allowed. */
  async refusal(caller: Caller | null, ip: string): Promise<ApiError | undefined> {
    const [key, p] = this.#bucketOf(caller, ip);
    const r = this.#buckets.takeKnown(key, p.rule) ?? (await this.#buckets.take(key, p.rule));
    return r.allowed ? undefined : errors.rateLimited(r.retryAfterSec);
  }

  #bucketOf(caller: Caller | null, ip: string): [string, Policy] {
    return caller ? [`fn:${caller.credentialId}`, this.#perCredential] : [`fn-ip:${ip}`, this.#perIp];
  }

  close(): Promise<void> {
    return this.#buckets.close();
  }
}

function settle(reply: FastifyReply, p: Policy, r: BucketResult, done: Done): void {
  reply.header('ratelimit-policy', p.header);
  reply.header('ratelimit', rateLimitState(p.name, r));
  done(r.allowed ? undefined : errors.rateLimited(r.retryAfterSec));
}
