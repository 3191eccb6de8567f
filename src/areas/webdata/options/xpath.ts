import { type Axis, type Expr, type NodeTest, parseXPath, type Step } from './xpath-parse.ts';

// XPath 1.0 evaluated on the linkedom document the extraction parsed (HTML5 rules, so real pages work
// as browsers see them). Names match case-insensitively, as `document.evaluate` does on HTML documents.
// Attributes are returned as small objects of our own (linkedom's Attr nodes are not needed for reading).

/** A linkedom node as far as XPath reads it. */
export type DomNode = {
  nodeType: number;
  parentNode: DomNode | null;
  childNodes?: ArrayLike<DomNode>;
  firstChild?: DomNode | null;
  nextSibling?: DomNode | null;
  localName?: string | null;
  textContent: string | null;
  attributes?: ArrayLike<{ name: string; value: string }>;
};
export class AttrNode {
  readonly owner: DomNode;
  readonly name: string;
  readonly value: string;
  readonly index: number;
  constructor(owner: DomNode, name: string, value: string, index: number) {
    this.owner = owner;
    this.name = name;
    this.value = value;
    this.index = index;
  }
}
export type XNode = DomNode | AttrNode;
export type XValue = XNode[] | string | number | boolean;

const ELEMENT = 1;
const TEXT = 3;
const CDATA = 4;
const COMMENT = 8;

/** A page's nodes an expression may visit before it is stopped (`//*/ /*//*` on a large page is cubic). */
export const XPATH_VISIT_BUDGET = 2_000_000;

const cache = new Map<string, Expr>();
/** The parsed expression, parsed once per process (field maps repeat across a batch's pages). */
export function compileXPath(src: string): Expr {
  let e = cache.get(src);
  if (!e) {
    e = parseXPath(src);
    if (cache.size > 500) cache.clear();
    cache.set(src, e);
  }
  return e;
}

/** Why an XPath expression cannot be used, or null when it can. */
export function xpathProblem(src: string): string | null {
  try {
    compileXPath(src);
    return null;
  } catch (err) {
    return String((err as Error)?.message ?? err).slice(0, 160);
  }
}

/** Evaluates `src` with `context` as the context node; a node-set comes back in document order. */
export function evaluateXPath(src: string, context: DomNode): XValue {
  return new Evaluator(context).run(compileXPath(src));
}

export function stringValue(n: XNode): string {
  if (n instanceof AttrNode) return n.value;
  return n.textContent ?? '';
}

type Ctx = { node: XNode; pos: number; size: number };

class Evaluator {
  private visits = 0;
  private order: Map<DomNode, number> | null = null;
  private attrs = new Map<DomNode, AttrNode[]>();
  private root: DomNode;

  constructor(context: DomNode) {
    let r = context;
    while (r.parentNode) r = r.parentNode;
    this.root = r;
    this.ctx0 = { node: context, pos: 1, size: 1 };
  }
  private ctx0: Ctx;

  run(e: Expr): XValue {
    return this.eval(e, this.ctx0);
  }

  private tick(n = 1) {
    this.visits += n;
    if (this.visits > XPATH_VISIT_BUDGET) {
      throw new Error(`the XPath visited over ${XPATH_VISIT_BUDGET.toLocaleString('en')} nodes; narrow it`);
    }
  }

  private eval(e: Expr, c: Ctx): XValue {
    switch (e.t) {
      case 'num':
        return e.v;
      case 'str':
        return e.v;
      case 'neg':
        return -num(this.eval(e.e, c));
      case 'union': {
        const l = this.eval(e.l, c);
        const r = this.eval(e.r, c);
        if (!Array.isArray(l) || !Array.isArray(r)) throw new Error('| joins node-sets only');
        return this.sorted([...l, ...r]);
      }
      case 'fn':
        return this.fn(e.name, e.args, c);
      case 'bin':
        return this.binary(e.op, e.l, e.r, c);
      case 'path':
        return this.path(e, c);
    }
  }

  private binary(op: string, le: Expr, re: Expr, c: Ctx): XValue {
    if (op === 'or') return bool(this.eval(le, c)) || bool(this.eval(re, c));
    if (op === 'and') return bool(this.eval(le, c)) && bool(this.eval(re, c));
    const l = this.eval(le, c);
    const r = this.eval(re, c);
    if (op === '+') return num(l) + num(r);
    if (op === '-') return num(l) - num(r);
    if (op === '*') return num(l) * num(r);
    if (op === 'div') return num(l) / num(r);
    if (op === 'mod') return num(l) % num(r);
    return compare(op, l, r);
  }

  private path(e: Extract<Expr, { t: 'path' }>, c: Ctx): XValue {
    let set: XNode[];
    if (e.filter) {
      const v = this.eval(e.filter, c);
      if (!Array.isArray(v)) {
        if (e.preds.length || e.steps.length) throw new Error('a path or predicate needs a node-set');
        return v;
      }
      set = this.filter(v, e.preds);
    } else set = [e.abs ? this.root : c.node];
    for (const step of e.steps) set = this.step(set, step);
    return set;
  }

  private step(input: XNode[], step: Step): XNode[] {
    const out: XNode[] = [];
    for (const n of input) {
      const found = this.axis(n, step.axis).filter((m) => matches(m, step.axis, step.test));
      for (const m of this.filter(found, step.preds)) out.push(m);
    }
    return input.length > 1 || REVERSE.has(step.axis) ? this.sorted(out) : out;
  }

  private filter(nodes: XNode[], preds: Expr[]): XNode[] {
    let cur = nodes;
    for (const pred of preds) {
      const size = cur.length;
      cur = cur.filter((node, i) => {
        const v = this.eval(pred, { node, pos: i + 1, size });
        return typeof v === 'number' ? v === i + 1 : bool(v);
      });
    }
    return cur;
  }

  /** The axis's nodes in its own order (reverse axes nearest first, as positions count them). */
  private axis(n: XNode, axis: Axis): XNode[] {
    const out: XNode[] = [];
    const el = n instanceof AttrNode ? null : n;
    const parent = n instanceof AttrNode ? n.owner : n.parentNode;
    switch (axis) {
      case 'self':
        return [n];
      case 'parent':
        return parent ? [parent] : [];
      case 'attribute':
        return el ? this.attributesOf(el) : [];
      case 'child':
        if (el) for (const k of kids(el)) out.push(k);
        break;
      case 'descendant-or-self':
        out.push(n);
        if (el) this.descend(el, out);
        break;
      case 'descendant':
        if (el) this.descend(el, out);
        break;
      case 'ancestor-or-self':
        out.push(n);
        for (let a = parent; a; a = a.parentNode) out.push(a);
        break;
      case 'ancestor':
        for (let a = parent; a; a = a.parentNode) out.push(a);
        break;
      case 'following-sibling':
      case 'preceding-sibling': {
        if (!el || !parent) break;
        const sibs = kids(parent);
        const i = sibs.indexOf(el);
        if (axis === 'following-sibling') for (let j = i + 1; j < sibs.length; j++) out.push(sibs[j]);
        else for (let j = i - 1; j >= 0; j--) out.push(sibs[j]);
        break;
      }
      case 'following':
      case 'preceding': {
        const all: XNode[] = [];
        this.descend(this.root, all);
        const anchor = n instanceof AttrNode ? n.owner : n;
        const at = this.pos(anchor);
        const inside = new Set<DomNode>();
        if (axis === 'following') this.descend(anchor, inside);
        const ancestors = new Set<DomNode>();
        for (let a = anchor.parentNode; a; a = a.parentNode) ancestors.add(a);
        for (const m of all) {
          const p = this.pos(m);
          if (axis === 'following' && p > at && !inside.has(m as DomNode)) out.push(m);
          if (axis === 'preceding' && p < at && !ancestors.has(m as DomNode)) out.push(m);
        }
        if (axis === 'preceding') out.reverse();
        break;
      }
    }
    if (!WALKS.has(axis)) this.tick(out.length);
    return out;
  }

  // Pre-order through firstChild/nextSibling (linkedom builds a fresh array for every childNodes read),
  // counting each node against the budget as it is visited.
  private descend(n: DomNode, out: XNode[] | Set<DomNode>) {
    const stack: DomNode[] = [];
    let m = first(n);
    while (m) {
      if (++this.visits > XPATH_VISIT_BUDGET) this.tick(0);
      if (out instanceof Set) out.add(m);
      else out.push(m);
      const next = after(m);
      const child = first(m);
      if (child) {
        if (next) stack.push(next);
        m = child;
      } else m = next ?? stack.pop() ?? null;
    }
  }

  private attributesOf(el: DomNode): AttrNode[] {
    let list = this.attrs.get(el);
    if (!list) {
      list = Array.from(el.attributes ?? [], (a, i) => new AttrNode(el, a.name.toLowerCase(), a.value, i));
      this.attrs.set(el, list);
    }
    return list;
  }

  private pos(n: XNode): number {
    if (!this.order) {
      this.order = new Map([[this.root, 0]]);
      const all: XNode[] = [];
      this.descend(this.root, all);
      for (let i = 0; i < all.length; i++) this.order.set(all[i] as DomNode, i + 1);
    }
    if (n instanceof AttrNode) return (this.order.get(n.owner) ?? 0) + (n.index + 1) / 10_000;
    return this.order.get(n) ?? 0;
  }

  private sorted(nodes: XNode[]): XNode[] {
    return [...new Set(nodes)].sort((a, b) => this.pos(a) - this.pos(b));
  }

  private fn(name: string, args: Expr[], c: Ctx): XValue {
    const a = (i: number) => this.eval(args[i], c);
    const s = (i: number) => (args[i] ? str(a(i)) : str([c.node]));
    switch (name) {
      case 'last':
        return c.size;
      case 'position':
        return c.pos;
      case 'count':
        return nodes(a(0), name).length;
      case 'string':
        return s(0);
      case 'concat':
        return args.map((_, i) => str(a(i))).join('');
      case 'contains':
        return s(0).includes(s(1));
      case 'starts-with':
        return s(0).startsWith(s(1));
      case 'ends-with':
        return s(0).endsWith(s(1));
      case 'substring': {
        const text = s(0);
        const from = Math.round(num(a(1)));
        const end = args[2] ? from + Math.round(num(a(2))) : Number.POSITIVE_INFINITY;
        return [...text].filter((_, i) => i + 1 >= from && i + 1 < end).join('');
      }
      case 'substring-before': {
        const [t, m] = [s(0), s(1)];
        return t.includes(m) ? t.slice(0, t.indexOf(m)) : '';
      }
      case 'substring-after': {
        const [t, m] = [s(0), s(1)];
        return t.includes(m) ? t.slice(t.indexOf(m) + m.length) : '';
      }
      case 'string-length':
        return [...s(0)].length;
      case 'normalize-space':
        return s(0).replace(/\s+/g, ' ').trim();
      case 'translate': {
        const [from, to] = [[...s(1)], [...s(2)]];
        return [...s(0)].map((ch) => (from.includes(ch) ? (to[from.indexOf(ch)] ?? '') : ch)).join('');
      }
      case 'lower-case':
        return s(0).toLowerCase();
      case 'not':
        return !bool(a(0));
      case 'true':
        return true;
      case 'false':
        return false;
      case 'boolean':
        return bool(a(0));
      case 'number':
        return args[0] ? num(a(0)) : num(s(0));
      case 'sum':
        return nodes(a(0), name).reduce((t, n) => t + num(stringValue(n)), 0);
      case 'floor':
        return Math.floor(num(a(0)));
      case 'ceiling':
        return Math.ceil(num(a(0)));
      case 'round':
        return Math.round(num(a(0)));
      default: {
        // name() and local-name(): the first node's lower-case name.
        const n = args[0] ? nodes(a(0), name)[0] : c.node;
        if (!n) return '';
        return n instanceof AttrNode ? n.name : (n.localName ?? '').toLowerCase();
      }
    }
  }
}

// Axes whose nodes `descend` counts as it walks.
const WALKS = new Set<Axis>(['descendant', 'descendant-or-self', 'following', 'preceding']);
const REVERSE = new Set<Axis>(['ancestor', 'ancestor-or-self', 'preceding', 'preceding-sibling']);

function kids(n: DomNode): DomNode[] {
  const out: DomNode[] = [];
  for (let k = first(n); k; k = after(k)) out.push(k);
  return out;
}

// Children and siblings without the doctype, which XPath's data model does not have.
// (linkedom's doctype has no nextSibling, so a document's children are read from its list.)
function first(n: DomNode): DomNode | null {
  if (n.nodeType === 9) return Array.from(n.childNodes ?? []).find((k) => k.nodeType !== 10) ?? null;
  return n.firstChild ?? null;
}
function after(n: DomNode): DomNode | null {
  let k = n.nextSibling ?? null;
  while (k && k.nodeType === 10) k = k.nextSibling ?? null;
  return k;
}

function matches(n: XNode, axis: Axis, test: NodeTest): boolean {
  if (n instanceof AttrNode) {
    if (axis !== 'attribute') return false;
    return (
      test.kind === 'any' ||
      (test.kind === 'type' && test.type === 'node') ||
      (test.kind === 'name' && n.name === test.name)
    );
  }
  if (test.kind === 'type') {
    if (test.type === 'node') return true;
    if (test.type === 'text') return n.nodeType === TEXT || n.nodeType === CDATA;
    return n.nodeType === COMMENT;
  }
  if (n.nodeType !== ELEMENT) return false;
  return test.kind === 'any' || (n.localName ?? '').toLowerCase() === test.name;
}

function nodes(v: XValue, fn: string): XNode[] {
  if (!Array.isArray(v)) throw new Error(`${fn}() needs a node-set`);
  return v;
}

export function str(v: XValue): string {
  if (Array.isArray(v)) return v[0] ? stringValue(v[0]) : '';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : Number.isNaN(v) ? 'NaN' : String(v);
  return String(v);
}

function num(v: XValue): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  const s = str(v).trim();
  return s === '' || !/^-?(\d+(\.\d*)?|\.\d+)$/.test(s) ? Number.NaN : Number(s);
}

function bool(v: XValue): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'number') return v !== 0 && !Number.isNaN(v);
  if (typeof v === 'string') return v.length > 0;
  return v;
}

// XPath 1.0 §3.4: a node-set compares true when some node of it does.
function compare(op: string, l: XValue, r: XValue): boolean {
  if (Array.isArray(l) || Array.isArray(r)) {
    if (Array.isArray(l) && Array.isArray(r)) {
      const rs = r.map(stringValue);
      return l.some((a) => rs.some((b) => scalarCompare(op, stringValue(a), b)));
    }
    const [set, other, flip] = (Array.isArray(l) ? [l, r, false] : [r, l, true]) as [
      XNode[],
      Exclude<XValue, XNode[]>,
      boolean,
    ];
    if (typeof other === 'boolean')
      return flip ? scalarCompare(op, other, bool(set)) : scalarCompare(op, bool(set), other);
    return set.some((n) => {
      const sv: XValue = typeof other === 'number' ? num(stringValue(n)) : stringValue(n);
      return flip ? scalarCompare(op, other, sv) : scalarCompare(op, sv, other);
    });
  }
  return scalarCompare(op, l, r);
}

function scalarCompare(op: string, l: string | number | boolean, r: string | number | boolean): boolean {
  if (op === '=' || op === '!=') {
    let eq: boolean;
    if (typeof l === 'boolean' || typeof r === 'boolean') eq = bool(l) === bool(r);
    else if (typeof l === 'number' || typeof r === 'number') eq = num(l) === num(r);
    else eq = l === r;
    return op === '=' ? eq : !eq;
  }
  const [a, b] = [num(l), num(r)];
  if (op === '<') return a < b;
  if (op === '<=') return a <= b;
  if (op === '>') return a > b;
  return a >= b;
}
