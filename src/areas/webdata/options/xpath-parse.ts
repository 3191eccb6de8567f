// XPath 1.0 expressions parsed into a small tree (the grammar of the W3C recommendation, section 3, without
// variables and namespaces). Written here rather than taken from a library because none on the registry
// evaluates over an HTML5 parse: `xpath` walks an XML DOM (xmldom), which real pages' HTML is not; this
// parser feeds `xpath.ts`, which walks the linkedom document the extraction already has.

export type NodeTest = { kind: 'name'; name: string } | { kind: 'any' } | { kind: 'type'; type: NodeType };
export type NodeType = 'node' | 'text' | 'comment';
export type Axis = (typeof AXES)[number];
export type Step = { axis: Axis; test: NodeTest; preds: Expr[] };
export type Expr =
  | { t: 'num'; v: number }
  | { t: 'str'; v: string }
  | { t: 'bin'; op: string; l: Expr; r: Expr }
  | { t: 'neg'; e: Expr }
  | { t: 'union'; l: Expr; r: Expr }
  | { t: 'fn'; name: string; args: Expr[] }
  | { t: 'path'; abs: boolean; filter: Expr | null; preds: Expr[]; steps: Step[] };

export const AXES = [
  'ancestor',
  'ancestor-or-self',
  'attribute',
  'child',
  'descendant',
  'descendant-or-self',
  'following',
  'following-sibling',
  'parent',
  'preceding',
  'preceding-sibling',
  'self',
] as const;

/** Function name → [min args, max args]. Anything else is refused when the expression is parsed. */
export const FUNCTIONS: Record<string, [number, number]> = {
  last: [0, 0],
  position: [0, 0],
  count: [1, 1],
  string: [0, 1],
  concat: [2, 99],
  contains: [2, 2],
  'starts-with': [2, 2],
  'ends-with': [2, 2],
  substring: [2, 3],
  'substring-before': [2, 2],
  'substring-after': [2, 2],
  'string-length': [0, 1],
  'normalize-space': [0, 1],
  translate: [3, 3],
  'lower-case': [1, 1],
  not: [1, 1],
  true: [0, 0],
  false: [0, 0],
  boolean: [1, 1],
  number: [0, 1],
  sum: [1, 1],
  floor: [1, 1],
  ceiling: [1, 1],
  round: [1, 1],
  name: [0, 1],
  'local-name': [0, 1],
};

type Tok = { k: 'num' | 'str' | 'name' | 'op'; v: string };

const OPS = [
  '//',
  '::',
  '..',
  '!=',
  '<=',
  '>=',
  '/',
  '(',
  ')',
  '[',
  ']',
  '.',
  '@',
  ',',
  '|',
  '+',
  '-',
  '=',
  '<',
  '>',
  '*',
];
const NAME = /^(?:[A-Za-z_][\w.-]*)(?::(?:[A-Za-z_][\w.-]*|\*))?/;
const WORD_OPS = new Set(['and', 'or', 'mod', 'div']);
// After these (or at the start) `*` is a name test and `and`/`div`… are names; elsewhere they are operators.
const BEFORE_NAME = new Set([
  '@',
  '::',
  '(',
  '[',
  ',',
  '/',
  '//',
  '|',
  '+',
  '-',
  '=',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
]);

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  const operatorPlace = () => {
    const prev = out.at(-1);
    if (!prev) return false;
    if (prev.k === 'op') return !BEFORE_NAME.has(prev.v) && !(WORD_OPS.has(prev.v) || prev.v === '*mul');
    return true;
  };
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '"' || c === "'") {
      const end = src.indexOf(c, i + 1);
      if (end < 0) throw new Error('a string literal is not closed');
      out.push({ k: 'str', v: src.slice(i + 1, end) });
      i = end + 1;
      continue;
    }
    const num = /^(?:\d+(?:\.\d*)?|\.\d+)/.exec(src.slice(i));
    if (num) {
      out.push({ k: 'num', v: num[0] });
      i += num[0].length;
      continue;
    }
    if (c === '$') throw new Error('variables ($name) are not supported');
    const name = NAME.exec(src.slice(i));
    if (name) {
      const v = name[0];
      out.push(operatorPlace() && WORD_OPS.has(v) ? { k: 'op', v } : { k: 'name', v });
      i += v.length;
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (!op) throw new Error(`unexpected '${c}' at ${i + 1}`);
    out.push({ k: 'op', v: op === '*' && operatorPlace() ? '*mul' : op });
    i += op.length;
  }
  return out;
}

/** Parses an XPath 1.0 expression; throws an Error whose message says what is wrong. */
export function parseXPath(src: string): Expr {
  const toks = tokenize(src);
  let p = 0;
  const peek = (o = 0) => toks[p + o];
  const isOp = (v: string, o = 0) => peek(o)?.k === 'op' && peek(o)?.v === v;
  const take = (v: string) => {
    if (!isOp(v)) throw new Error(`expected '${v}'${peek() ? ` before '${peek().v}'` : ' at the end'}`);
    p++;
  };
  const binary = (ops: string[], next: () => Expr) => (): Expr => {
    let l = next();
    while (peek()?.k === 'op' && ops.includes(peek().v)) {
      const op = toks[p++].v;
      l = { t: 'bin', op: op === '*mul' ? '*' : op, l, r: next() };
    }
    return l;
  };
  const expr = (): Expr => orExpr();
  const unary = (): Expr => {
    if (isOp('-')) {
      p++;
      return { t: 'neg', e: unary() };
    }
    let l = pathExpr();
    while (isOp('|')) {
      p++;
      l = { t: 'union', l, r: pathExpr() };
    }
    return l;
  };
  const mul = binary(['*mul', 'div', 'mod'], unary);
  const add = binary(['+', '-'], mul);
  const rel = binary(['<', '<=', '>', '>='], add);
  const eq = binary(['=', '!='], rel);
  const and = binary(['and'], eq);
  const orExpr = binary(['or'], and);

  const preds = (): Expr[] => {
    const out: Expr[] = [];
    while (isOp('[')) {
      p++;
      out.push(expr());
      take(']');
    }
    return out;
  };
  const nodeTest = (): NodeTest => {
    const t = peek();
    if (t?.k === 'op' && t.v === '*') {
      p++;
      return { kind: 'any' };
    }
    if (t?.k !== 'name') throw new Error(`expected a name or * ${t ? `before '${t.v}'` : 'at the end'}`);
    p++;
    if (isOp('(')) {
      if (!['node', 'text', 'comment'].includes(t.v)) throw new Error(`${t.v}() is not a node test`);
      p++;
      take(')');
      return { kind: 'type', type: t.v as NodeType };
    }
    return t.v.endsWith(':*')
      ? { kind: 'any' }
      : { kind: 'name', name: t.v.replace(/^.*:/, '').toLowerCase() };
  };
  const step = (): Step => {
    if (isOp('.')) {
      p++;
      return { axis: 'self', test: { kind: 'type', type: 'node' }, preds: [] };
    }
    if (isOp('..')) {
      p++;
      return { axis: 'parent', test: { kind: 'type', type: 'node' }, preds: [] };
    }
    let axis: Axis = 'child';
    if (isOp('@')) {
      p++;
      axis = 'attribute';
    } else if (peek()?.k === 'name' && isOp('::', 1)) {
      const a = peek().v;
      if (!(AXES as readonly string[]).includes(a)) throw new Error(`unknown axis '${a}'`);
      axis = a as Axis;
      p += 2;
    }
    return { axis, test: nodeTest(), preds: preds() };
  };
  const DESC: Step = { axis: 'descendant-or-self', test: { kind: 'type', type: 'node' }, preds: [] };
  const relPath = (steps: Step[]) => {
    steps.push(step());
    while (isOp('/') || isOp('//')) {
      if (toks[p++].v === '//') steps.push(DESC);
      steps.push(step());
    }
    return steps;
  };
  const startsStep = () => {
    const t = peek();
    if (!t) return false;
    if (t.k === 'op') return ['.', '..', '@', '*'].includes(t.v);
    if (t.k !== 'name') return false;
    if (isOp('::', 1)) return true;
    return !isOp('(', 1) || ['node', 'text', 'comment'].includes(t.v);
  };
  const pathExpr = (): Expr => {
    if (isOp('/')) {
      p++;
      return { t: 'path', abs: true, filter: null, preds: [], steps: startsStep() ? relPath([]) : [] };
    }
    if (isOp('//')) {
      p++;
      return { t: 'path', abs: true, filter: null, preds: [], steps: relPath([DESC]) };
    }
    if (startsStep()) return { t: 'path', abs: false, filter: null, preds: [], steps: relPath([]) };
    const primary = primaryExpr();
    const ps = preds();
    if (!isOp('/') && !isOp('//') && ps.length === 0) return primary;
    const steps: Step[] = [];
    if (isOp('/') || isOp('//')) {
      if (toks[p++].v === '//') steps.push(DESC);
      relPath(steps);
    }
    return { t: 'path', abs: false, filter: primary, preds: ps, steps };
  };
  const primaryExpr = (): Expr => {
    const t = peek();
    if (!t) throw new Error('the expression ends too early');
    if (t.k === 'num') {
      p++;
      return { t: 'num', v: Number(t.v) };
    }
    if (t.k === 'str') {
      p++;
      return { t: 'str', v: t.v };
    }
    if (isOp('(')) {
      p++;
      const e = expr();
      take(')');
      return e;
    }
    if (t.k === 'name' && isOp('(', 1)) {
      const arity = FUNCTIONS[t.v];
      if (!arity) throw new Error(`unknown function ${t.v}()`);
      p += 2;
      const args: Expr[] = [];
      if (!isOp(')')) {
        args.push(expr());
        while (isOp(',')) {
          p++;
          args.push(expr());
        }
      }
      take(')');
      if (args.length < arity[0] || args.length > arity[1])
        throw new Error(`${t.v}() takes ${arity.join('–')} arguments`);
      return { t: 'fn', name: t.v, args };
    }
    throw new Error(`unexpected '${t.v}'`);
  };

  if (toks.length === 0) throw new Error('the expression is empty');
  const out = expr();
  if (p < toks.length) throw new Error(`unexpected '${toks[p].v}' after the expression`);
  return out;
}
