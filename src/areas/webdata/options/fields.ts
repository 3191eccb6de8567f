import { absolute, type parseDocument } from '../content.ts';
import type { FieldSpec } from './schema.ts';

// Schema extraction without a model: a field map of CSS selectors read from the page as it is (before
// any main-content choice), Crawl4AI's JsonCssExtractionStrategy in a smaller shape. A string is a
// selector whose first match's text is the value; an object may read an attribute, the inner HTML or a
// number, take every match as a list, and read nested fields inside each match. Nothing matched is null
// (or [] for a list): a missing field is an answer, not a failure.

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
