import { errorFromFetchFailure, errorFromResponse, PierApiError } from './errors.ts';
import type { CallArgs, FnName, FnOutput } from './types.ts';

export { isPierApiError, PierApiError } from './errors.ts';
export type { CallArgs, FnInput, FnName, FnOutput } from './types.ts';

export type PierClientOptions = {
  /** Pier's public URL, e.g. http://127.0.0.1:8787 (a trailing slash is ignored). */
  baseUrl: string;
  /** A bearer credential: pk.… (user), plat.… (platform) or op.… (operator). */
  token?: string;
  /** Per-call time limit; default 60 s. */
  timeoutMs?: number;
  userAgent?: string;
  /** Injected for tests; defaults to the global fetch. */
  fetch?: typeof fetch;
};

/**
 * A typed client of the function API: `call(name, input)` POSTs the flat JSON body to /api/fn/<name> and
 * returns the whole 200 body; every failure throws a PierApiError.
 */
export class PierClient {
  readonly baseUrl: string;
  readonly token?: string;
  readonly #timeoutMs: number;
  readonly #userAgent: string;
  readonly #fetch: typeof fetch;

  constructor(opts: PierClientOptions) {
    let url: URL;
    try {
      url = new URL(opts.baseUrl);
    } catch {
      throw new PierApiError(
        'INVALID_URL',
        0,
        `'${opts.baseUrl}' is not a URL; use e.g. http://127.0.0.1:8787.`,
      );
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new PierApiError('INVALID_URL', 0, `'${opts.baseUrl}' is not an http(s) URL.`);
    this.baseUrl = url.toString().replace(/\/+$/, '');
    this.token = opts.token;
    this.#timeoutMs = opts.timeoutMs ?? 60_000;
    this.#userAgent = opts.userAgent ?? 'pier-sdk';
    this.#fetch = opts.fetch ?? globalThis.fetch;
  }

  /** The same server with another credential. */
  withToken(token: string | undefined): PierClient {
    return new PierClient({
      baseUrl: this.baseUrl,
      token,
      timeoutMs: this.#timeoutMs,
      userAgent: this.#userAgent,
      fetch: this.#fetch,
    });
  }

  async call<N extends FnName>(name: N, ...args: CallArgs<N>): Promise<FnOutput<N>> {
    const url = `${this.baseUrl}/api/fn/${encodeURIComponent(name)}`;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
      'user-agent': this.#userAgent,
    };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    let res: Response;
    let text: string;
    try {
      res = await this.#fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify(args[0] ?? {}),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      text = await res.text();
    } catch (err) {
      throw errorFromFetchFailure(err, this.baseUrl, this.#timeoutMs);
    }
    if (!res.ok) throw errorFromResponse(res.status, res.statusText, text, res.headers);
    try {
      return JSON.parse(text) as FnOutput<N>;
    } catch {
      throw new PierApiError(
        'BAD_RESPONSE',
        res.status,
        `The answer of ${name} is not JSON; is the URL a Pier server?`,
        {
          requestId: res.headers.get('x-request-id') ?? undefined,
        },
      );
    }
  }
}
