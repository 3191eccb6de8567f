import { recordOwnModelCall, resolveModelFor } from '../models/index.ts';
import type { MemoryContext, Scope } from './context.ts';
import { memoryErrors } from './errors.ts';
import type { InferDecision } from './tables.ts';

// Inference through a model (mem0's two steps): one call extracts standalone facts from the messages, a
// second reconciles them with the agent's most similar stored memories (ADD / UPDATE / DELETE / NONE).
// The stored memories are shown to the model under short ids ("m1"), never their uuids, so a decision
// can only name a memory it was shown (an invented id is refused below, and the fact is added instead).

export type InferMessage = { role: string; content: string; at: Date; name?: string };
export type ExtractedFact = {
  content: string;
  confidence: number;
  tags: string[];
  /** Index of the message it came from. */
  message: number;
  /** ISO date or time the fact speaks of, when the model found one. */
  eventAt: string | null;
};
export type Candidate = { id: string; content: string };
export type Decision = {
  fact: number;
  event: InferDecision;
  /** The stored memory it updates, deletes or matches. */
  target: Candidate | null;
  /** UPDATE: the fact's merged text (default: the fact as extracted). */
  content: string | null;
  reason: string;
};

const EXTRACT_SYSTEM = `You extract facts worth remembering from a conversation, for a long-term memory.
Extract facts about the people in it: preferences, plans, relationships, events, places, possessions, decisions.
Each fact is one short standalone sentence that makes sense on its own: name who it is about (the user is "User"
unless a name is given), replace pronouns by names, and keep names, numbers and dates. When a message says when
something happened ("last month"), write the resolved date into the fact and into eventAt (ISO 8601, resolved
against the message's time). Skip greetings, questions, and what the assistant merely says back.
"message" is the index of the message the fact comes from. Answer only with the JSON object.`;

const RECONCILE_SYSTEM = `You keep a memory up to date. For each new fact, compare it with the stored memories and decide:
ADD: it is new information;
UPDATE: it changes or adds detail to a stored memory (the stored one is replaced by "content", the merged fact);
DELETE: it shows a stored memory is no longer true, and is not worth storing itself;
NONE: a stored memory already says it.
A fact that contradicts a stored memory (the user moved, changed job, changed a preference) is an UPDATE of it.
"memory" is the stored memory's id (null for ADD), "reason" one short sentence. Answer only with the JSON object.`;

const EXTRACT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['facts'],
  properties: {
    facts: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['content', 'confidence', 'tags', 'message', 'eventAt'],
        properties: {
          content: { type: 'string' },
          confidence: { type: 'number' },
          tags: { type: 'array', items: { type: 'string' } },
          message: { type: 'integer' },
          eventAt: { type: ['string', 'null'] },
        },
      },
    },
  },
} as const;

const RECONCILE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['decisions'],
  properties: {
    decisions: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['fact', 'event', 'memory', 'content', 'reason'],
        properties: {
          fact: { type: 'integer' },
          event: { type: 'string', enum: ['ADD', 'UPDATE', 'DELETE', 'NONE'] },
          memory: { type: ['string', 'null'] },
          content: { type: ['string', 'null'] },
          reason: { type: 'string' },
        },
      },
    },
  },
} as const;

const clamp01 = (n: unknown) =>
  typeof n === 'number' && Number.isFinite(n) ? Math.min(1, Math.max(0, n)) : 0.9;
const str = (v: unknown, max: number) => (typeof v === 'string' ? v.trim().slice(0, max) : '');

export type ModelInference = {
  model: string;
  extract(messages: InferMessage[]): Promise<ExtractedFact[]>;
  reconcile(facts: ExtractedFact[], candidates: Candidate[]): Promise<Decision[]>;
};

/** The model `name` for the organization (its own key first), with both steps. */
export async function modelInference(
  ctx: MemoryContext,
  s: Scope,
  name: string,
  keyId?: string,
): Promise<ModelInference> {
  const resolved = await resolveModelFor(ctx.deps, s.orgId, name);
  const model = `${resolved.provider}/${resolved.model}`;
  // The text of a JSON-schema answer, parsed here: an answer that is not that JSON is the model's failure
  // (MEMORY_INFERENCE_FAILED), not the provider's (whose errors keep their own codes: 429, 502, 503).
  const ask = async (system: string, prompt: string, schema: object, schemaName: string) => {
    const res = await ctx.deps.models.generateText({
      resolved,
      system,
      prompt,
      temperature: 0,
      responseFormat: { type: 'json_schema', name: schemaName, schema: schema as never, strict: true },
    });
    // Spent whether or not the answer is usable: counted in usage and spend like a call through /v1/ai.
    await recordOwnModelCall(ctx.deps, {
      orgId: s.orgId,
      environment: s.environment,
      keyId,
      model,
      usage: res.usage,
    });
    try {
      const object = JSON.parse(res.text.trim().replace(/^```(?:json)?\s*|\s*```$/g, '')) as unknown;
      if (object && typeof object === 'object' && !Array.isArray(object))
        return { object: object as Record<string, unknown>, model: res.model };
    } catch {}
    throw memoryErrors.inferenceFailed(name);
  };
  return {
    model,
    async extract(messages) {
      const prompt = messages
        .map(
          (m, i) =>
            `[${i}] ${m.at.toISOString()} ${m.role}${m.name ? ` (${m.name})` : ''}: ${m.content.slice(0, 8000)}`,
        )
        .join('\n');
      const { object } = await ask(EXTRACT_SYSTEM, `Messages:\n${prompt}`, EXTRACT_SCHEMA, 'facts');
      const facts = Array.isArray(object.facts) ? object.facts : [];
      return facts
        .map((f: Record<string, unknown>) => ({
          content: str(f.content, 2000),
          confidence: clamp01(f.confidence),
          tags: Array.isArray(f.tags)
            ? f.tags
                .map((t) => str(t, 100))
                .filter(Boolean)
                .slice(0, 20)
            : [],
          message:
            Number.isInteger(f.message) &&
            (f.message as number) >= 0 &&
            (f.message as number) < messages.length
              ? (f.message as number)
              : 0,
          eventAt: typeof f.eventAt === 'string' && f.eventAt.trim() ? f.eventAt.trim() : null,
        }))
        .filter((f) => f.content.length > 0)
        .slice(0, 100);
    },
    async reconcile(facts, candidates) {
      const short = new Map(candidates.map((c, i) => [`m${i + 1}`, c]));
      const prompt = [
        'Stored memories:',
        ...(candidates.length
          ? candidates.map((c, i) => `m${i + 1}: ${c.content.slice(0, 2000)}`)
          : ['(none)']),
        '',
        'New facts:',
        ...facts.map((f, i) => `${i}: ${f.content}`),
      ].join('\n');
      const { object } = await ask(RECONCILE_SYSTEM, prompt, RECONCILE_SCHEMA, 'decisions');
      const raw = Array.isArray(object.decisions) ? object.decisions : [];
      const byFact = new Map<number, Decision>();
      for (const d of raw as Record<string, unknown>[]) {
        const fact = Number(d.fact);
        if (!Number.isInteger(fact) || fact < 0 || fact >= facts.length || byFact.has(fact)) continue;
        const event = (['ADD', 'UPDATE', 'DELETE', 'NONE'] as const).find((e) => e === d.event) ?? 'ADD';
        const target = typeof d.memory === 'string' ? (short.get(d.memory.trim()) ?? null) : null;
        const reason = str(d.reason, 500) || 'The model gave no reason.';
        // A decision about a memory the model was not shown cannot be applied: the fact is added instead.
        if (event !== 'ADD' && !target) {
          byFact.set(fact, {
            fact,
            event: 'ADD',
            target: null,
            content: null,
            reason: `${reason} (named no stored memory it was shown, so added)`,
          });
          continue;
        }
        byFact.set(fact, {
          fact,
          event,
          target: event === 'ADD' ? null : target,
          content: str(d.content, 2000) || null,
          reason,
        });
      }
      return facts.map(
        (_, i) =>
          byFact.get(i) ?? {
            fact: i,
            event: 'ADD',
            target: null,
            content: null,
            reason: 'The model decided nothing about it: added.',
          },
      );
    },
  };
}
