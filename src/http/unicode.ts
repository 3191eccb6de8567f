import type { FastifyInstance, FastifySchemaCompiler, preValidationHookHandler, RouteOptions } from 'fastify';
import { errors } from '../core/errors.ts';

// One rule for every string a request carries: it must be well-formed UTF-16, because PostgreSQL refuses an
// unpaired surrogate in jsonb (a 500) and turns it into U+FFFD in text (a silent rewrite). Bytes decoded as
// UTF-8 never yield one; only a JSON `\ud800` escape does, so the body check runs only when the raw text
// holds such an escape and stays free for every other request.

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
// A surrogate percent-escaped as if it were UTF-8 (ED A0..BF 80..BF, CESU-8): no decoder accepts it. The
// path decoder refuses the whole URL; the query decoder keeps the escape as literal text.
const PERCENT_SURROGATE = /%[eE][dD]%[abAB][0-9a-fA-F]%[89abAB][0-9a-fA-F]/g;
const HAS_PERCENT_SURROGATE = new RegExp(PERCENT_SURROGATE.source);

const PROBLEM = 'contains an unpaired UTF-16 surrogate';

/** The dotted path of the first string or key in `value` that is not well-formed UTF-16, or null. */
export function unpairedSurrogateAt(value: unknown, path = '', depth = 0): string | null {
  if (typeof value === 'string') return value.isWellFormed() ? null : path;
  if (depth > 64 || value === null || typeof value !== 'object') return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const at = unpairedSurrogateAt(value[i], path ? `${path}.${i}` : String(i), depth + 1);
      if (at !== null) return at;
    }
    return null;
  }
  const o = value as Record<string, unknown>;
  for (const k in o) {
    const here = path ? `${path}.${k.isWellFormed() ? k : k.toWellFormed()}` : k.toWellFormed();
    if (!k.isWellFormed()) return here;
    const at = unpairedSurrogateAt(o[k], here, depth + 1);
    if (at !== null) return at;
  }
  return null;
}

function refusal(context: string, at: string) {
  return errors.validation(`${at ? `${context}.${at}` : context}: ${PROBLEM}.`);
}

/** Throws the 400 for a parsed JSON body whose raw text escaped an unpaired surrogate. */
export function checkJsonBody(raw: string, parsed: unknown): void {
  // indexOf first: a plain substring search is several times cheaper than the regex on most bodies.
  if (raw.indexOf('\\u') === -1 || !SURROGATE_ESCAPE.test(raw)) return;
  const at = unpairedSurrogateAt(parsed);
  if (at !== null) throw refusal('body', at);
}

/**
 * Throws the 400 for an application/x-www-form-urlencoded body holding a percent-escaped surrogate, which
 * URLSearchParams would otherwise turn into U+FFFD without a word.
 */
export function checkFormBody(raw: string): void {
  if (!HAS_PERCENT_SURROGATE.test(raw)) return;
  for (const pair of raw.split('&')) {
    if (!HAS_PERCENT_SURROGATE.test(pair)) continue;
    const name = pair.split('=')[0] ?? '';
    const key = new URLSearchParams(`${name}=`).keys().next().value ?? name;
    throw refusal('body', key);
  }
}

function checkFlat(context: string, value: unknown): Error | null {
  if (value === null || typeof value !== 'object') return null;
  const o = value as Record<string, unknown>;
  for (const k in o) {
    if (!k.isWellFormed() || HAS_PERCENT_SURROGATE.test(k)) return refusal(context, k.toWellFormed());
    const v = o[k];
    const list = Array.isArray(v) ? v : [v];
    for (const s of list)
      if (typeof s === 'string' && (!s.isWellFormed() || HAS_PERCENT_SURROGATE.test(s)))
        return refusal(context, k);
  }
  return null;
}

/**
 * Fastify's rewriteUrl: a percent-escaped surrogate in the path becomes the unpaired surrogate it spells, so
 * the path parameter that holds it is refused by name (surrogateGuard, guardSchemalessParams) instead of the
 * router answering a nameless bad URL. The query is left as it came: there the escape stays literal text,
 * harmless to a route that reads no query, and refused by name where a schema reads it.
 */
export function surrogateEscapesInUrl(req: { url?: string }): string {
  const url = req.url ?? '/';
  const pct = url.indexOf('%');
  if (pct === -1) return url;
  const q = url.indexOf('?');
  if (q !== -1 && q < pct) return url;
  return q === -1
    ? url.replace(PERCENT_SURROGATE, '\ud800')
    : url.slice(0, q).replace(PERCENT_SURROGATE, '\ud800') + url.slice(q);
}

/**
 * Wraps a validator compiler so a query string or path parameter holding an unpaired surrogate (or its
 * undecodable percent-escape) is refused before the schema runs, naming the field. Bodies are checked where
 * they are parsed (app.ts); routes without a query or params schema compile nothing extra.
 */
export function surrogateGuard<S>(inner: FastifySchemaCompiler<S>): FastifySchemaCompiler<S> {
  return (route) => {
    const validate = inner(route);
    const part = route.httpPart;
    if (part !== 'querystring' && part !== 'params') return validate;
    return (data) => {
      const err = checkFlat(part, data);
      return err ? { error: err } : validate(data);
    };
  };
}

const guardParams: preValidationHookHandler = (req, _reply, done) =>
  done(checkFlat('params', req.params) ?? undefined);

/** The same refusal on routes that take path parameters without a schema for them (their guard is a hook). */
export function guardSchemalessParams(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.schema?.params || !/[:*]/.test(route.url)) return;
    const pre = route.preValidation;
    route.preValidation =
      pre === undefined ? [guardParams] : [...(Array.isArray(pre) ? pre : [pre]), guardParams];
  });
}
