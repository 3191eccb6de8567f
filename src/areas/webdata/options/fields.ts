import { absolute, type parseDocument } from '../content.ts';
import { PageFailure } from '../fetch-page.ts';
import type { FieldSpec } from './schema.ts';
import { isXPath } from './selectors.ts';
import { AttrNode, type DomNode, evaluateXPath, type XNode } from './xpath.ts';

// Schema extraction without a model: a field map of CSS selectors read from the page as it is (before
// any main-content choice), Crawl4AI's JsonCssExtractionStrategy in a smaller shape. A string is a
// selector whose first match's text is the value; an object may read an attribute, the inner HTML or a
// number, take every match as a list, and read nested fields inside each match. Nothing matched is null
// (or [] for a list): a missing field is an answer, not a failure. A selector may be XPath 1.0 instead
// (`isXPath`), evaluated from the scope: `//h1` searches the page, `./h2` or `.//a/@href` inside a match;
// it may select elements, attributes or text nodes, or compute a value (`count(//li)`).

type Doc = ReturnType<typeof parseDocument>;
type El = ReturnType<Doc['querySelector']> & {};
type Scope = Doc | El;

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();
const URL_ATTRS = new Set(['href', 'src', 'action', 'poster', 'data-src']);

export function extractFields(
  doc: Doc,
  baseUrl: string,
  fields: Record<string, FieldSpec | string>,
): Record<string, unknown> {
  return readFields(doc, baseUrl, fields);
}

function readFields(scope: Scope, baseUrl: string, fields: Record<string, FieldSpec | string>) {
  const out: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(fields)) {
    const spec: FieldSpec = typeof raw === 'string' ? { selector: raw } : raw;
    if (isXPath(spec.selector)) {
      try {
        out[name] = readXPath(scope, baseUrl, spec);
      } catch (err) {
        // A cost or type problem found only on this page (the syntax was checked at the request).
        throw new PageFailure(`Selector field '${name}': ${(err as Error).message}.`);
      }
      continue;
    }
    if (spec.list) {
      out[name] = [...scope.querySelectorAll(spec.selector)].map((el) => readOne(el, baseUrl, spec));
    } else {
      const el = scope.querySelector(spec.selector);
      out[name] = el ? readOne(el, baseUrl, spec) : null;
    }
  }
  return out;
}

function readOne(el: El, baseUrl: string, spec: FieldSpec): unknown {
  if (spec.fields) return readFields(el, baseUrl, spec.fields);
  if (spec.attribute) {
    const value = el.getAttribute(spec.attribute);
    if (value === null) return null;
    return URL_ATTRS.has(spec.attribute.toLowerCase()) ? (absolute(value, baseUrl) ?? value) : value;
  }
  if (spec.type === 'html') return (el.innerHTML ?? '').trim();
  const text = squash(el.textContent ?? '');
  if (spec.type === 'number') return firstNumber(text);
  return text;
}

function readXPath(scope: Scope, baseUrl: string, spec: FieldSpec): unknown {
  const v = evaluateXPath(spec.selector, scope as unknown as DomNode);
  if (!Array.isArray(v)) {
    const value = spec.type === 'number' && typeof v === 'string' ? firstNumber(v) : v;
    return spec.list ? [value] : value;
  }
  const read = (n: XNode) =>
    n instanceof AttrNode || n.nodeType !== 1
      ? readNode(n, baseUrl, spec)
      : readOne(n as unknown as El, baseUrl, spec);
  if (spec.list) return v.map(read);
  return v[0] ? read(v[0]) : null;
}

// An attribute or a text node: its value (an href or src made absolute), or the number in it.
function readNode(n: XNode, baseUrl: string, spec: FieldSpec): unknown {
  if (spec.fields) return null;
  if (n instanceof AttrNode) {
    if (spec.type === 'number') return firstNumber(n.value);
    return URL_ATTRS.has(n.name) ? (absolute(n.value, baseUrl) ?? n.value) : n.value;
  }
  const text = squash(n.textContent ?? '');
  return spec.type === 'number' ? firstNumber(text) : text;
}

// "Price: 1,149.50 EUR" → 1149.5; "1.149,50 €" → 1149.5. The separator that comes last with 1–2 digits
// after it is the decimal one.
function firstNumber(text: string): number | null {
  const m = /-?\d[\d.,\s]*/.exec(text.replace(/\u00a0/g, ' '));
  if (!m) return null;
  let s = m[0].replace(/\s/g, '').replace(/[.,]$/, '');
  const dec = /[.,](\d{1,2})$/.exec(s);
  s = dec ? `${s.slice(0, dec.index).replace(/[.,]/g, '')}.${dec[1]}` : s.replace(/[.,]/g, '');
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}
