import { parseHTML } from 'linkedom';
import { xpathProblem } from './xpath.ts';
import { AXES, FUNCTIONS } from './xpath-parse.ts';

// CSS selectors and path regexes given by callers, checked when the request arrives (a 400 naming the bad
// one) rather than when a job meets them. Selectors are checked with the same engine that applies them
// (linkedom's css-select); the browser's actions use Chromium's, which accepts at least as much.

const probe = parseHTML('<html><body><p></p></body></html>').document;

/**
 * A field map's selector is XPath when it starts as only a path or an expression can: `/`, `./`, `../`,
 * `(`, a function call (`count(`, `normalize-space(`) or an axis (`descendant::`). No CSS selector
 * begins that way (CSS functions follow a `:`), so one string field serves both without a flag.
 */
export function isXPath(selector: string): boolean {
  return XPATH_START.test(selector);
}
const XPATH_START = new RegExp(
  `^\\s*(?:/|\\.\\.?/|\\(|(?:${Object.keys(FUNCTIONS).join('|')})\\s*\\(|(?:${AXES.join('|')})::)`,
);

/** Why a field map's selector (CSS or XPath) cannot be used, or null when it can. */
export function fieldSelectorProblem(selector: string): string | null {
  if (!isXPath(selector)) return selectorProblem(selector);
  const problem = xpathProblem(selector);
  return problem ? `not a valid XPath expression: ${problem}` : null;
}

/** Why a CSS selector cannot be used, or null when it can. */
export function selectorProblem(selector: string): string | null {
  if (isXPath(selector)) {
    return 'XPath is taken by selector fields only; includeTags, excludeTags and actions take CSS';
  }
  try {
    probe.querySelectorAll(selector);
    return null;
  } catch (err) {
    return String((err as Error)?.message ?? err).slice(0, 120);
  }
}

/**
 * Why a path regex cannot be used, or null. Patterns run on the worker against every link a crawl
 * finds, so one that can backtrack for ever (a quantified group that itself holds a quantifier, as in
 * `(a+)+`) is refused as well as one that does not compile.
 */
export function regexProblem(pattern: string): string | null {
  try {
    new RegExp(pattern);
  } catch (err) {
    return String((err as Error)?.message ?? err).replace(/^Invalid regular expression: /, '');
  }
  if (nestedQuantifier(pattern)) {
    return 'a repeated group holds a repetition itself (like (a+)+), which can take exponential time';
  }
  return null;
}

const REPEAT = /^(?:[*+]|\{\d+(?:,\d*)?\})/;

// Star height above one, found by scanning groups: a group "repeats inside" when it holds a `*`, `+` or
// `{n,m}`, and such a group followed by one of those is the nested repetition that backtracks
// exponentially.
function nestedQuantifier(p: string): boolean {
  const stack: boolean[] = [];
  let inClass = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '(') stack.push(false);
    else if (c === ')') {
      const inner = stack.pop() ?? false;
      const repeated = REPEAT.test(p.slice(i + 1));
      if (inner && repeated) return true;
      if (stack.length > 0 && (inner || repeated)) stack[stack.length - 1] = true;
    } else if (stack.length > 0 && REPEAT.test(p.slice(i))) stack[stack.length - 1] = true;
  }
  return false;
}
