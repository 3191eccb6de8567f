import { and, eq, sql } from 'drizzle-orm';
import { requireAgent } from './agents.ts';
import { requireCollection } from './collections.ts';
import type { MemoryContext, Scope } from './context.ts';
import {
  type Candidate,
  type Decision,
  type ExtractedFact,
  type InferMessage,
  modelInference,
} from './inference-model.ts';
import { requireMemory, type StoreItem, storeMemories } from './memories.ts';
import { type MemoryRow, memoryView } from './memory-view.ts';
import { recall } from './recall.ts';
import type { AddMemoriesInput } from './schema.ts';
import { compareStatements, splitStatements } from './statements.ts';
import { type HistoryEvent, type InferDecision, type Lineage, memories, memoryHistory } from './tables.ts';
import { type EventTime, eventTimeOf } from './time-expressions.ts';

// memory.add (docs/memory.md, "Inference"): messages in, memories out. Without inference each message is
// stored as it is. With it, facts are extracted and reconciled against the agent's most similar stored
// memories — by a model (inference-model.ts) or, with none configured, by rules (statements.ts) — and
// each decision is applied and written into the history of the memories it touches, with its reason.

/** The name inference by rules records as its model. */
export const RULES_MODEL = 'pier-rules/v1';
/** Stored memories each fact is compared with (its top hybrid recall among the agent's memories). */
const CANDIDATES_PER_FACT = 5;
const EXCERPT_CHARS = 280;

type Message = InferMessage & { id?: string; told: boolean };
type Fact = { content: string; confidence: number; tags: string[]; message: number; time: EventTime | null };
type Result = {
  event: InferDecision;
  fact: string;
  reason: string;
  memory: ReturnType<typeof memoryView> | null;
  previous: Candidate | null;
};
type Run = {
  ctx: MemoryContext;
  s: Scope;
  input: AddMemoriesInput;
  messages: Message[];
  model: string;
  now: Date;
  /** Memories this call archived: a later decision about one of them no longer applies. */
  archived: Set<string>;
  created: number;
  keyId?: string;
};

/** `keyId`: the calling API key, whose usage a model's calls count in. */
export async function addMemories(ctx: MemoryContext, s: Scope, input: AddMemoriesInput, keyId?: string) {
  const agent = await requireAgent(ctx, s, input.agentId);
  if (input.collectionId) await requireCollection(ctx, s, input.collectionId);
  const now = ctx.deps.clock.now();
  const refTime = input.referenceTime ? new Date(input.referenceTime) : null;
  const messages: Message[] = (input.messages ?? [{ role: 'user' as const, content: input.content! }]).map(
    (m) => {
      const at = 'createdAt' in m && m.createdAt ? new Date(m.createdAt) : refTime;
      return {
        role: m.role,
        content: m.content,
        name: 'name' in m ? m.name : undefined,
        id: 'id' in m ? m.id : undefined,
        at: at ?? now,
        told: at !== null,
      };
    },
  );
  const infer = input.infer ?? agent.infer;
  if (!infer) return addVerbatim(ctx, s, input, messages, now);
  const modelName = input.model ?? agent.inferModel ?? ctx.deps.config.models.textModel;
  const run: Run = {
    ctx,
    s,
    input,
    messages,
    model: RULES_MODEL,
    now,
    archived: new Set(),
    created: 0,
    keyId,
  };
  const results = modelName ? await inferWithModel(run, modelName) : await inferWithRules(run);
  return { inferred: true, model: run.model, created: run.created, results };
}

function sourceOf(m: Message, index: number): NonNullable<Lineage['source']> {
  return {
    index,
    role: m.role,
    ...(m.id ? { id: m.id } : {}),
    ...(m.told ? { at: m.at.toISOString() } : {}),
    excerpt: m.content.length > EXCERPT_CHARS ? `${m.content.slice(0, EXCERPT_CHARS - 1)}…` : m.content,
  };
}

/** A text's event time, resolved against when its message was said. */
const timeOf = (content: string, m: Message, run: Run, told?: string | null) =>
  eventTimeOf(
    {
      content,
      eventAt: told ?? undefined,
      referenceTime: m.told ? m.at.toISOString() : undefined,
      metadata: run.input.metadata,
    },
    run.now,
  );

/** Without inference: each message stored as it was said (one memory each), duplicates folded as usual. */
async function addVerbatim(
  ctx: MemoryContext,
  s: Scope,
  input: AddMemoriesInput,
  messages: Message[],
  now: Date,
) {
  const items: StoreItem[] = messages.map((m, i) => ({
    content: m.content,
    type: input.type ?? 'episodic',
    confidence: input.confidence ?? 1,
    tags: input.tags,
    metadata: input.metadata,
    collectionId: input.collectionId,
    lineage: { source: sourceOf(m, i) },
    eventTime: eventTimeOf(
      {
        content: m.content,
        referenceTime: m.told ? m.at.toISOString() : undefined,
        metadata: input.metadata,
      },
      now,
    ),
  }));
  const out = await storeMemories(ctx, s, input.agentId, items);
  return {
    inferred: false,
    model: null,
    created: out.created,
    results: out.memories.map((memory, i) => ({
      event: (out.createdFlags[i] ? 'ADD' : 'NONE') as InferDecision,
      fact: memory.content,
      reason: out.createdFlags[i] ? 'Stored as said (no inference).' : 'The same content is already stored.',
      memory,
      previous: out.createdFlags[i] ? null : { id: memory.id, content: memory.content },
    })),
  };
}

/** The agent's stored memories most like `text` (hot, warm and cold), without counting as a use. */
async function similarStored(run: Run, text: string): Promise<Candidate[]> {
  const r = await recall(
    run.ctx,
    run.s,
    {
      query: text.slice(0, 32_000),
      agentId: run.input.agentId,
      collectionId: run.input.collectionId,
      limit: CANDIDATES_PER_FACT,
      mode: 'hybrid',
      tiers: ['hot', 'warm', 'cold'],
    },
    { countAccess: false },
  );
  return r.memories.filter((m) => !run.archived.has(m.id)).map((m) => ({ id: m.id, content: m.content }));
}

/**
 * Rules: the statements of the user's messages (of every message when none is the user's), each compared
 * with its most similar stored memories — the ones this call stored included, so a statement repeated in
 * the call is stored once.
 */
async function inferWithRules(run: Run): Promise<Result[]> {
  const fromUser = run.messages.some((m) => m.role === 'user');
  const results: Result[] = [];
  for (const [index, m] of run.messages.entries()) {
    if (fromUser && m.role !== 'user') continue;
    for (const statement of splitStatements(m.content)) {
      const fact: Fact = {
        content: statement,
        confidence: run.input.confidence ?? 1,
        tags: run.input.tags ?? [],
        message: index,
        time: timeOf(statement, m, run),
      };
      const candidates = await similarStored(run, statement);
      results.push(await apply(run, fact, decideByRules(statement, candidates)));
    }
  }
  return results;
}

function decideByRules(statement: string, candidates: Candidate[]): Omit<Decision, 'fact'> {
  const compared = candidates.map((c) => ({
    c,
    fresh: compareStatements(statement, c.content),
    stored: compareStatements(c.content, statement),
  }));
  const pick = (ok: (x: (typeof compared)[number]) => boolean) => compared.find(ok)?.c ?? null;
  let target = pick((x) => x.fresh === 'exact');
  if (target)
    return { event: 'NONE', target, content: null, reason: 'The same statement is already stored.' };
  target = pick((x) => x.fresh === 'near');
  if (target)
    return {
      event: 'NONE',
      target,
      content: null,
      reason: 'A stored memory says nearly the same (near duplicate).',
    };
  target = pick((x) => x.stored === 'fuller');
  if (target)
    return { event: 'NONE', target, content: null, reason: 'A stored memory already says this and more.' };
  target = pick((x) => x.fresh === 'fuller');
  if (target)
    return {
      event: 'UPDATE',
      target,
      content: null,
      reason: 'It says everything the stored memory said and more: it replaces it.',
    };
  return { event: 'ADD', target: null, content: null, reason: 'No stored memory says this: a new fact.' };
}

/** A model: one call extracts the facts, one reconciles them with the union of their similar memories. */
async function inferWithModel(run: Run, name: string): Promise<Result[]> {
  const m = await modelInference(run.ctx, run.s, name, run.keyId);
  run.model = m.model;
  const extracted: ExtractedFact[] = await m.extract(run.messages);
  if (!extracted.length) return [];
  const facts: Fact[] = extracted.map((f) => ({
    content: f.content,
    confidence: f.confidence,
    tags: [...new Set([...(run.input.tags ?? []), ...f.tags])].slice(0, 50),
    message: f.message,
    time: timeOf(f.content, run.messages[f.message]!, run, f.eventAt),
  }));
  const seen = new Map<string, Candidate>();
  for (const f of facts) for (const c of await similarStored(run, f.content)) seen.set(c.id, c);
  const decisions = await m.reconcile(extracted, [...seen.values()].slice(0, 50));
  const results: Result[] = [];
  for (const d of decisions) results.push(await apply(run, facts[d.fact]!, d));
  return results;
}

async function logDecision(
  run: Run,
  row: MemoryRow,
  event: HistoryEvent,
  decision: InferDecision,
  reason: string,
  related: string | null,
  fresh = false,
) {
  await run.ctx.deps.db.orm.insert(memoryHistory).values({
    memoryId: row.id,
    orgId: run.s.orgId,
    environment: run.s.environment,
    content: row.content,
    type: row.type,
    tier: row.tier,
    confidence: row.confidence,
    tags: row.tags,
    metadata: row.metadata,
    event,
    validFrom: fresh ? run.now : row.updatedAt,
    validTo: run.now,
    decision,
    reason,
    relatedMemoryId: related,
    model: run.model,
  });
}

/** Archives a fact that stopped holding at `until`, linking it to what superseded it. */
async function retire(run: Run, id: string, until: Date, supersededBy: Candidate | null) {
  run.archived.add(id);
  await run.ctx.deps.db.orm
    .update(memories)
    .set({
      tier: 'archived',
      validUntil: until,
      updatedAt: run.now,
      ...(supersededBy
        ? {
            lineage: sql`coalesce(${memories.lineage}, '{}'::jsonb) || ${JSON.stringify({ supersededBy })}::jsonb`,
          }
        : {}),
    })
    .where(
      and(eq(memories.id, id), eq(memories.orgId, run.s.orgId), eq(memories.environment, run.s.environment)),
    );
}

async function storeFact(run: Run, fact: Fact, content: string, supersedes: Candidate | null) {
  const out = await storeMemories(run.ctx, run.s, run.input.agentId, [
    {
      content,
      type: 'semantic',
      confidence: fact.confidence,
      tags: fact.tags,
      metadata: run.input.metadata,
      collectionId: run.input.collectionId,
      lineage: {
        source: sourceOf(run.messages[fact.message]!, fact.message),
        ...(supersedes ? { supersedes: [supersedes] } : {}),
        model: run.model,
      },
      eventTime: fact.time,
    },
  ]);
  run.created += out.created;
  return { memory: out.memories[0]!, created: out.createdFlags[0]! };
}

/** Applies one decision; a decision about a memory this call already archived no longer applies. */
async function apply(run: Run, fact: Fact, d: Omit<Decision, 'fact'>): Promise<Result> {
  const stale = d.target && run.archived.has(d.target.id);
  const event: InferDecision = stale ? (d.event === 'UPDATE' ? 'ADD' : 'NONE') : d.event;
  const target = stale ? null : d.target;
  const reason = stale ? `${d.reason} (its memory was already replaced in this call)` : d.reason;
  const base = { fact: fact.content, reason, previous: target };

  if (event === 'ADD' || (event === 'UPDATE' && target)) {
    const content = (event === 'UPDATE' && d.content) || fact.content;
    const stored = await storeFact(run, fact, content, event === 'UPDATE' ? target : null);
    const row = await requireMemory(run.ctx, run.s, stored.memory.id);
    if (!stored.created || (target && row.id === target.id)) {
      // What the fact says is stored already, word for word.
      await logDecision(run, row, 'confirmed', 'NONE', 'The same content is already stored.', null);
      return {
        ...base,
        event: 'NONE',
        reason: 'The same content is already stored.',
        memory: memoryView(row),
        previous: { id: row.id, content: row.content },
      };
    }
    if (event === 'UPDATE' && target) {
      const before = await requireMemory(run.ctx, run.s, target.id);
      await logDecision(run, before, 'superseded', 'UPDATE', reason, row.id);
      await retire(run, target.id, fact.time?.at ?? run.now, { id: row.id, content: row.content });
    }
    await logDecision(run, row, 'added', event, reason, target?.id ?? null, true);
    return { ...base, event, memory: memoryView(row) };
  }
  if (event === 'DELETE' && target) {
    const before = await requireMemory(run.ctx, run.s, target.id);
    await logDecision(run, before, 'deleted', 'DELETE', reason, null);
    await retire(run, target.id, fact.time?.at ?? run.now, null);
    return { ...base, event, memory: null };
  }
  if (target) {
    const row = await requireMemory(run.ctx, run.s, target.id);
    await logDecision(run, row, 'confirmed', 'NONE', reason, null);
    return { ...base, event: 'NONE', memory: memoryView(row) };
  }
  return { ...base, event: 'NONE', memory: null };
}
