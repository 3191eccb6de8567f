import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Caller } from '../core/auth/caller.ts';
import { errors } from '../core/errors.ts';
import {
  type BucketResult,
  type BucketRule,
  rateLimitHeaders,
  TokenBuckets,
} from '../core/rate-limit/token-buckets.ts';
import type { Deps } from '../deps.ts';

// The function API's token buckets (docs/function-api.md, "Rate limits"): one per credential that resolved
// (personal token, dashboard session, platform credential, operator key; a call the MCP endpoint makes for
// its caller counts against that caller's credential), and one per client address for calls without one
// (public functions such as the login code exchange, and refused credentials). The address is Fastify's
// req.ip, so TRUST_PROXY decides whether a forwarded one counts. The same buckets as v1
// (core/rate-limit/token-buckets.ts): no query for a key this process already knows.

const CREDENTIAL_POLICY = 'fn';
const IP_POLICY = 'fn-ip';

type Done = (err?: Error) => void;

export class FnRateLimit {
  readonly #buckets: TokenBuckets;
  readonly #perCredential: BucketRule;
  readonly #perIp: BucketRule;

  constructor(deps: Deps) {
    this.#buckets = new TokenBuckets(deps.db, deps.clock, {
      onSyncError: (err) => deps.log.warn({ err }, 'fn rate limit: sync to the database failed (retried)'),
    });
    this.#perCredential = deps.config.fnRateLimit.perCredential;
    this.#perIp = deps.config.fnRateLimit.perIp;
  }

  /** Takes a token for this call: done() when allowed, done(RATE_LIMITED) past the budget. Sync when known. */
  check(req: FastifyRequest, reply: FastifyReply, caller: Caller | null, done: Done): void {
    const byCredential = caller !== null;
    const key = byCredential ? `fn:${caller.credentialId}` : `fn-ip:${req.ip}`;
    const rule = byCredential ? this.#perCredential : this.#perIp;
    const policy = byCredential ? CREDENTIAL_POLICY : IP_POLICY;
    const known = this.#buckets.takeKnown(key, rule);
    if (known) settle(reply, policy, rule, known, done);
    else this.#buckets.take(key, rule).then((r) => settle(reply, policy, rule, r, done), done);
  }

  close(): Promise<void> {
    return this.#buckets.close();
  }
}

function settle(reply: FastifyReply, policy: string, rule: BucketRule, r: BucketResult, done: Done): void {
  const [policyHeader, state] = rateLimitHeaders(policy, rule, r);
  reply.header('ratelimit-policy', policyHeader);
  reply.header('ratelimit', state);
  done(r.allowed ? undefined : errors.rateLimited(r.retryAfterSec));
}
