import { and, count, desc, eq, inArray, isNull, or } from 'drizzle-orm';
import { isUuid } from '../../core/ids.ts';
import { offsetPage } from '../../core/pagination.ts';
import type { MemoryContext, Scope } from './context.ts';
import { memoryErrors } from './errors.ts';
import type { CreateAgentInput, UpdateAgentInput } from './schema.ts';
import { memories, memoryAgents } from './tables.ts';

type AgentRow = typeof memoryAgents.$inferSelect;

export function agentView(r: AgentRow) {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    instructions: r.instructions,
    metadata: r.metadata,
    infer: r.infer,
    inferModel: r.inferModel,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

const inScope = (s: Scope) =>
  and(eq(memoryAgents.orgId, s.orgId), eq(memoryAgents.environment, s.environment));

export async function createAgent(ctx: MemoryContext, s: Scope, input: CreateAgentInput) {
  const now = ctx.deps.clock.now();
  const [row] = await ctx.deps.db.orm
    .insert(memoryAgents)
    .values({
      orgId: s.orgId,
      environment: s.environment,
      name: input.name,
      description: input.description ?? null,
      instructions: input.instructions ?? null,
      metadata: input.metadata ?? {},
      infer: input.infer ?? false,
      inferModel: input.inferModel ?? null,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  return agentView(row!);
}

/** The agent row, or AGENT_NOT_FOUND (also for another org's or the other environment's agent). */
export async function requireAgent(ctx: MemoryContext, s: Scope, agentId: string): Promise<AgentRow> {
  if (!isUuid(agentId)) throw memoryErrors.agentNotFound();
  const [row] = await ctx.deps.db.orm
    .select()
    .from(memoryAgents)
    .where(and(inScope(s), eq(memoryAgents.id, agentId)));
  if (!row) throw memoryErrors.agentNotFound();
  return row;
}

export async function getAgent(ctx: MemoryContext, s: Scope, agentId: string) {
  return agentView(await requireAgent(ctx, s, agentId));
}

export async function listAgents(ctx: MemoryContext, s: Scope, q: { limit: number; offset: number }) {
  const db = ctx.deps.db.orm;
  const rows = await db
    .select()
    .from(memoryAgents)
    .where(inScope(s))
    .orderBy(desc(memoryAgents.createdAt), desc(memoryAgents.id))
    .limit(q.limit)
    .offset(q.offset);
  const [{ n }] = (await db.select({ n: count() }).from(memoryAgents).where(inScope(s))) as [{ n: number }];
  return offsetPage(rows.map(agentView), Number(n), q);
}

export async function updateAgent(ctx: MemoryContext, s: Scope, agentId: string, input: UpdateAgentInput) {
  await requireAgent(ctx, s, agentId);
  const [row] = await ctx.deps.db.orm
    .update(memoryAgents)
    .set({
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(input.instructions !== undefined ? { instructions: input.instructions } : {}),
      ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
      ...(input.infer !== undefined ? { infer: input.infer } : {}),
      ...(input.inferModel !== undefined ? { inferModel: input.inferModel } : {}),
      updatedAt: ctx.deps.clock.now(),
    })
    .where(and(inScope(s), eq(memoryAgents.id, agentId)))
    .returning();
  return agentView(row!);
}

/** Deletes the agent; its memories (and their history) go with it through the foreign keys. */
export async function deleteAgent(ctx: MemoryContext, s: Scope, agentId: string) {
  await requireAgent(ctx, s, agentId);
  await ctx.deps.db.orm.delete(memoryAgents).where(and(inScope(s), eq(memoryAgents.id, agentId)));
  return { success: true };
}

/** How many memories (every tier) each of these agents has, and how many belong to no agent. */
export async function agentMemoryCounts(
  ctx: MemoryContext,
  s: Scope,
  agentIds: string[],
): Promise<{ byAgent: Map<string, number>; withoutAgent: number }> {
  const rows = await ctx.deps.db.orm
    .select({ agentId: memories.agentId, n: count() })
    .from(memories)
    .where(
      and(
        eq(memories.orgId, s.orgId),
        eq(memories.environment, s.environment),
        agentIds.length
          ? or(inArray(memories.agentId, agentIds), isNull(memories.agentId))
          : isNull(memories.agentId),
      ),
    )
    .groupBy(memories.agentId);
  const byAgent = new Map<string, number>();
  let withoutAgent = 0;
  for (const r of rows) {
    if (r.agentId === null) withoutAgent = Number(r.n);
    else byAgent.set(r.agentId, Number(r.n));
  }
  return { byAgent, withoutAgent };
}
