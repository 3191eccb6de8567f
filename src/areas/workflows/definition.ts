import jsonata from 'jsonata';
import { z } from 'zod';
import { waitDef, waitProblems } from './waits/def.ts';

// A workflow's definition: the step and variable schemas (the contract's fields plus each type's own), and
// the checks run at create and update. Every problem is collected, so one answer lists them all.

export const STEP_TYPES = [
  'llm',
  'image',
  'video',
  'audio',
  'code',
  'http',
  'transform',
  'condition',
  'loop',
  'wait',
] as const;
export type StepType = (typeof STEP_TYPES)[number];
/** What a loop may run per item (kept in-process, so a loop is one durable unit: docs/workflows.md). */
export const LOOP_SUBSTEP_TYPES = ['llm', 'code', 'http', 'transform'] as const;

const id = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/, 'letters, digits, _ and -, starting with a letter');
/** Attempt n waits min(maxBackoffMs, backoffMs·backoffCoefficient^(n-1)); see retry-policy.ts. */
const retry = z.object({
  maxAttempts: z.number().int().min(1).max(10).optional(),
  /** The first wait (the initial interval). */
  backoffMs: z.number().int().min(0).max(600_000).optional(),
  backoffCoefficient: z.number().min(1).max(10).optional(),
  maxBackoffMs: z.number().int().min(0).max(3_600_000).optional(),
  /** HTTP statuses that fail at once; replaces the default (every 4xx but 408 and 429). */
  nonRetryableStatuses: z.array(z.number().int().min(100).max(599)).max(100).optional(),
  /** An error whose message contains one of these fails at once. */
  nonRetryableErrors: z.array(z.string().min(1).max(200)).max(20).optional(),
});

const stepFields = {
  id,
  type: z.string().max(40),
  name: z.string().max(200).optional(),
  provider: z.string().max(40).optional(),
  model: z.string().max(200).optional(),
  prompt: z.string().max(100_000).optional(),
  system: z.string().max(20_000).optional(),
  dependsOn: z.array(z.string().max(64)).max(200).optional(),
  outputVariable: z.string().max(64).optional(),
  retry: retry.optional(),
  /** A failure (after its retries) does not fail the run: the step completes with `{ error }` as output. */
  continueOnError: z.boolean().optional(),
  /** llm: `text` (default) or `json`; with json, `schema` is the JSON schema asked for. */
  outputFormat: z.enum(['text', 'json']).optional(),
  schema: z.record(z.string(), z.unknown()).optional(),
  /** image: e.g. 1024x1024. audio: voice. */
  size: z
    .string()
    .regex(/^\d{2,4}x\d{2,4}$/)
    .optional(),
  voice: z.string().max(100).optional(),
  /** code: the body of `function (input) { … }`; its return value (JSON) is the output. */
  code: z.string().max(100_000).optional(),
  timeLimitMs: z.number().int().min(10).max(5000).optional(),
  memoryLimitMb: z.number().int().min(1).max(256).optional(),
  /** http */
  url: z.string().max(4000).optional(),
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']).optional(),
  headers: z.record(z.string(), z.string().max(8000)).optional(),
  body: z.unknown().optional(),
  timeoutMs: z.number().int().min(100).max(60_000).optional(),
  maxBytes: z
    .number()
    .int()
    .min(1)
    .max(10 * 1024 * 1024)
    .optional(),
  responseType: z.enum(['json', 'text', 'auto']).optional(),
  /** transform and condition: a JSONata expression over the run's data. */
  expression: z.string().max(20_000).optional(),
  whenTrue: z.array(z.string().max(64)).max(200).optional(),
  whenFalse: z.array(z.string().max(64)).max(200).optional(),
  /** loop: a JSONata expression (or `{{…}}` reference) giving the array; its sub-steps run per item. */
  items: z.string().max(20_000).optional(),
  maxItems: z.number().int().min(1).max(1000).optional(),
  concurrency: z.number().int().min(1).max(20).optional(),
  /** wait: what it waits for (waits/def.ts). */
  wait: waitDef.optional(),
};
export const subStepDef = z.object(stepFields);
export const stepDef = z.object({ ...stepFields, steps: z.array(subStepDef).max(50).optional() });
export type StepDef = z.infer<typeof stepDef>;

export const VARIABLE_TYPES = ['string', 'number', 'boolean', 'object', 'array'] as const;
export const variableDef = z.object({
  type: z.enum(VARIABLE_TYPES),
  required: z.boolean().optional(),
  default: z.unknown().optional(),
  description: z.string().max(1000).optional(),
});
export type VariableDefs = Record<string, z.infer<typeof variableDef>>;
export const variableDefs = z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/), variableDef);

export const MAX_STEPS = 200;
const TEMPLATE_RE = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** The `{{…}}` references of a template string. */
export function templateRefs(s: string | undefined): string[] {
  if (!s) return [];
  return [...s.matchAll(TEMPLATE_RE)].map((m) => m[1]!);
}

export function typeOf(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  return typeof v;
}

/** The step ids a step depends on, the condition's branch targets included. */
export const depsOf = (s: StepDef) => s.dependsOn ?? [];

/** Ancestors of every step (transitive dependsOn); assumes no cycle. */
function ancestors(steps: StepDef[]): Map<string, Set<string>> {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const memo = new Map<string, Set<string>>();
  const visit = (sid: string, seen: Set<string>): Set<string> => {
    const hit = memo.get(sid);
    if (hit) return hit;
    const out = new Set<string>();
    if (seen.has(sid)) return out;
    seen.add(sid);
    for (const d of depsOf(byId.get(sid) ?? ({} as StepDef))) {
      if (!byId.has(d)) continue;
      out.add(d);
      for (const a of visit(d, seen)) out.add(a);
    }
    memo.set(sid, out);
    return out;
  };
  for (const s of steps) visit(s.id, new Set());
  return memo;
}

/** The ids of steps on a dependency cycle (empty when there is none). */
export function cycleMembers(steps: StepDef[]): string[] {
  const ids = new Set(steps.map((s) => s.id));
  const indegree = new Map(steps.map((s) => [s.id, depsOf(s).filter((d) => ids.has(d)).length]));
  const children = new Map<string, string[]>();
  for (const s of steps) for (const d of depsOf(s)) children.set(d, [...(children.get(d) ?? []), s.id]);
  const queue = [...indegree].filter(([, n]) => n === 0).map(([k]) => k);
  while (queue.length) {
    const k = queue.shift()!;
    for (const c of children.get(k) ?? []) {
      const n = indegree.get(c)! - 1;
      indegree.set(c, n);
      if (n === 0) queue.push(c);
    }
  }
  return [...indegree].filter(([, n]) => n > 0).map(([k]) => k);
}

function checkExpression(at: string, field: string, expr: string | undefined, problems: string[]) {
  if (expr === undefined) return;
  try {
    jsonata(expr);
  } catch (err) {
    problems.push(`${at}: ${field} is not a valid JSONata expression (${(err as Error).message}).`);
  }
}

export type ModelCheck = (step: StepDef) => Promise<string | null>;

type Scope = { variables: Set<string>; visible: Set<string>; inLoop: boolean };

function checkRefs(at: string, step: StepDef, scope: Scope, problems: string[]) {
  const headerValues = Object.values(step.headers ?? {});
  const templates = [step.prompt, step.system, step.url, step.wait?.until, ...headerValues];
  if (typeof step.body === 'string') templates.push(step.body);
  if (step.items?.includes('{{')) templates.push(step.items);
  for (const ref of templates.flatMap(templateRefs)) {
    const parts = ref.split('.');
    if (parts[0] === 'steps') {
      const target = parts[1] ?? '';
      if (parts[2] !== 'output')
        problems.push(`${at}: '{{${ref}}}' must read a step's output ({{steps.<id>.output…}}).`);
      else if (!scope.visible.has(target))
        problems.push(
          `${at}: '{{${ref}}}' names step '${target}', which is not a step this one depends on (directly or through others).`,
        );
    } else if (scope.inLoop && (parts[0] === 'item' || parts[0] === 'index')) {
      // the loop's current item
    } else if (!scope.variables.has(parts[0]!)) {
      problems.push(`${at}: '{{${ref}}}' names no variable of the workflow.`);
    }
  }
}

async function checkStep(
  at: string,
  s: StepDef,
  scope: Scope,
  modelCheck: ModelCheck,
  problems: string[],
): Promise<void> {
  const need = (field: keyof StepDef) => {
    const v = s[field];
    if (v === undefined || v === '') problems.push(`${at}: type ${s.type} needs '${field}'.`);
  };
  if (!(STEP_TYPES as readonly string[]).includes(s.type)) {
    problems.push(`${at}: unknown type '${s.type}' (one of ${STEP_TYPES.join(', ')}).`);
    return;
  }
  switch (s.type as StepType) {
    case 'llm':
    case 'image':
    case 'audio':
    case 'video': {
      need('model');
      need('prompt');
      if (s.model) {
        const bad = await modelCheck(s);
        if (bad) problems.push(`${at}: ${bad}`);
      }
      break;
    }
    case 'code':
      need('code');
      break;
    case 'http':
      need('url');
      if (s.url && !s.url.startsWith('{{') && !/^https?:\/\//i.test(s.url))
        problems.push(`${at}: url must start with http:// or https://.`);
      break;
    case 'transform':
    case 'condition':
      need('expression');
      checkExpression(at, 'expression', s.expression, problems);
      break;
    case 'loop':
      need('items');
      if (s.items && !s.items.includes('{{')) checkExpression(at, 'items', s.items, problems);
      if (!s.steps?.length) problems.push(`${at}: type loop needs 'steps' (the sub-steps run per item).`);
      break;
    case 'wait':
      problems.push(...waitProblems(at, s.wait));
      break;
  }
  checkRefs(at, s, scope, problems);
}

/** Every problem of a definition, in one list (empty when it is valid). */
export async function definitionProblems(
  steps: StepDef[],
  variables: VariableDefs,
  modelCheck: ModelCheck,
): Promise<string[]> {
  const problems: string[] = [];
  if (steps.length > MAX_STEPS) problems.push(`A workflow has at most ${MAX_STEPS} steps.`);
  for (const [name, v] of Object.entries(variables)) {
    if (v.default !== undefined && typeOf(v.default) !== v.type)
      problems.push(`variables.${name}: default is ${typeOf(v.default)}, not ${v.type}.`);
  }
  const seen = new Set<string>();
  for (const s of steps) {
    if (seen.has(s.id)) problems.push(`steps: id '${s.id}' is used more than once.`);
    seen.add(s.id);
  }
  for (const s of steps)
    for (const d of depsOf(s))
      if (!seen.has(d)) problems.push(`steps.${s.id}: dependsOn names '${d}', which is not a step.`);
      else if (d === s.id) problems.push(`steps.${s.id}: depends on itself.`);
  const cycle = cycleMembers(steps);
  if (cycle.length) problems.push(`steps: dependency cycle through ${cycle.join(', ')}.`);
  const anc = cycle.length ? new Map<string, Set<string>>() : ancestors(steps);
  const varNames = new Set(Object.keys(variables));
  for (const s of steps) {
    const at = `steps.${s.id}`;
    await checkStep(
      at,
      s,
      { variables: varNames, visible: anc.get(s.id) ?? new Set(), inLoop: false },
      modelCheck,
      problems,
    );
    if (s.type === 'condition') {
      for (const target of [...(s.whenTrue ?? []), ...(s.whenFalse ?? [])]) {
        const t = steps.find((x) => x.id === target);
        if (!t) problems.push(`${at}: branch names '${target}', which is not a step.`);
        else if (!depsOf(t).includes(s.id))
          problems.push(`${at}: branch step '${target}' must list '${s.id}' in its dependsOn.`);
      }
    } else if (s.whenTrue || s.whenFalse)
      problems.push(`${at}: whenTrue/whenFalse belong to condition steps.`);
    if (s.type === 'loop' && s.steps) {
      const subIds = new Set<string>();
      for (const sub of s.steps) {
        const sat = `${at}.steps.${sub.id}`;
        if (subIds.has(sub.id)) problems.push(`${sat}: id is used more than once in the loop.`);
        subIds.add(sub.id);
        if (!(LOOP_SUBSTEP_TYPES as readonly string[]).includes(sub.type))
          problems.push(`${sat}: a loop runs ${LOOP_SUBSTEP_TYPES.join(', ')} steps, not '${sub.type}'.`);
      }
      // A sub-step sees the loop's own ancestors and the sub-steps listed before it.
      const before = new Set(anc.get(s.id) ?? []);
      for (const sub of s.steps) {
        const sat = `${at}.steps.${sub.id}`;
        for (const d of depsOf(sub))
          if (!before.has(d) || !subIds.has(d))
            problems.push(`${sat}: dependsOn names '${d}', which is not an earlier sub-step of the loop.`);
        if ((LOOP_SUBSTEP_TYPES as readonly string[]).includes(sub.type))
          await checkStep(
            sat,
            sub,
            { variables: varNames, visible: before, inLoop: true },
            modelCheck,
            problems,
          );
        before.add(sub.id);
      }
    }
  }
  return problems;
}

/** The run's variables: defaults filled in; every missing, mistyped or unknown one named. */
export function runVariableProblems(
  defs: VariableDefs,
  given: Record<string, unknown>,
): { values: Record<string, unknown>; problems: string[] } {
  const problems: string[] = [];
  const values: Record<string, unknown> = {};
  for (const [name, d] of Object.entries(defs)) {
    const v = given[name];
    if (v === undefined) {
      if (d.default !== undefined) values[name] = d.default;
      else if (d.required) problems.push(`'${name}' is required (${d.type}).`);
      continue;
    }
    if (typeOf(v) !== d.type) problems.push(`'${name}' must be ${d.type}, got ${typeOf(v)}.`);
    else values[name] = v;
  }
  for (const name of Object.keys(given))
    if (!(name in defs)) problems.push(`'${name}' is not a variable of this workflow.`);
  return { values, problems };
}
