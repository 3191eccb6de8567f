import { and, asc, desc, eq, inArray, ne, sql } from 'drizzle-orm';

import { isUuid } from '../../core/ids.ts';
import { activeEmbedder } from '../models/index.ts';
import { requireCollection } from './collections.ts';
import type { MemoryContext, Scope } from './context.ts';
import { contentHash } from './embedding.ts';
import { memoryErrors } from './errors.ts';
import { vectorColumns, writeEmbedded } from './org-embedder.ts';
import { memories, memoryCollections, memoryCompactionJobs, memoryHistory } from './tables.ts';
import { literal, slotOf } from './vector-indexes.ts';

// Compaction (strategy "summarize"): memories of one agent in one collection whose cosine similarity is
// at least the collection's threshold are linked; each linked group becomes one semantic summary whose
// metadata lists its sourceMemoryIds, and the sources are archived. A summary never links to another
// summary, and links to a memory only if that memory is newer than it — so re-running with nothing new
// changes nothing, and later near-duplicates fold into the existing summary.

/** Memories considered per run (oldest first); a bigger collection is compacted over several runs. */
export const COMPACTION_MAX_PER_RUN = 2000;

type JobRow = typeof memoryCompactionJobs.$inferSelect;

export function compactionJobView(j: JobRow) {
  return {
    id: j.id,
    status: j.status,
    collectionId: j.collectionId,
    strategy: j.strategy,
    trigger: j.trigger,
    memoriesProcessed: j.memoriesProcessed,
    memoriesCreated: j.memoriesCreated,
    memoriesArchived: j.memoriesArchived,
    error: j.error,
    createdAt: j.createdAt.toISOString(),
    startedAt: j.startedAt?.toISOString() ?? null,
    completedAt: j.completedAt?.toISOString() ?? null,
  };
}

export async function requestCompaction(
  ctx: MemoryContext,
  s: Scope,
  collectionId: string,
  trigger: 'manual' | 'auto' = 'manual',
) {
  const col = await requireCollection(ctx, s, collectionId);
  const db = ctx.deps.db.orm;
  // One compaction per collection at a time: asking again while one waits or runs returns that one.
  const [open] = await db
    .select()
    .from(memoryCompactionJobs)
    .where(
      and(
        eq(memoryCompactionJobs.collectionId, col.id),
        inArray(memoryCompactionJobs.status, ['pending', 'processing']),
      ),
    )
    .orderBy(desc(memoryCompactionJobs.createdAt))
    .limit(1);
  if (open) return { jobId: open.id, status: open.status, collectionId: col.id };
  const [job] = await db
    .insert(memoryCompactionJobs)
    .values({
      orgId: s.orgId,
      environment: s.environment,
      collectionId: col.id,
      status: 'pending',
      strategy: col.compactionStrategy,
      threshold: col.compactionThreshold,
      trigger,
      createdAt: ctx.deps.clock.now(),
    })
    .returning();
  try {
    await ctx.deps.jobs.enqueue('memory.compact', { jobId: job!.id }, { singletonKey: job!.id });
  } catch (err) {
    await db.delete(memoryCompactionJobs).where(eq(memoryCompactionJobs.id, job!.id));
    throw err;
  }
  return { jobId: job!.id, status: job!.status, collectionId: col.id };
}

export async function getCompactionJob(ctx: MemoryContext, s: Scope, jobId: string) {
  if (!isUuid(jobId)) throw memoryErrors.compactionJobNotFound();
  const [j] = await ctx.deps.db.orm
    .select()
    .from(memoryCompactionJobs)
    .where(
      and(
        eq(memoryCompactionJobs.id, jobId),
        eq(memoryCompactionJobs.orgId, s.orgId),
        eq(memoryCompactionJobs.environment, s.environment),
      ),
    );
  if (!j) throw memoryErrors.compactionJobNotFound();
  return compactionJobView(j);
}

/** After a write: an enabled collection compacts itself once triggerCount memories arrived since the last run. */
export async function maybeAutoCompact(ctx: MemoryContext, s: Scope, collectionId: string): Promise<void> {
  const [col] = await ctx.deps.db.orm
    .select()
    .from(memoryCollections)
    .where(eq(memoryCollections.id, collectionId));
  if (!col?.compactionEnabled) return;
  const since = col.lastCompactionAt ?? new Date(0);
  const { rows } = await ctx.deps.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM memories WHERE collection_id = $1 AND tier <> 'archived'
        AND created_at > $2 LIMIT $3) x`,
    [collectionId, since.toISOString(), col.compactionTriggerCount],
  );
  if (rows[0]!.n < col.compactionTriggerCount) return;
  try {
    await requestCompaction(ctx, s, collectionId, 'auto');
  } catch (err) {
    // The write itself succeeded; a failed trigger is retried by the next write.
    ctx.deps.log.error({ err, collectionId }, 'automatic memory compaction could not be queued');
  }
}

type Candidate = {
  id: string;
  content: string;
  agentId: string | null;
  confidence: number;
  tags: string[];
  metadata: Record<string, unknown>;
  createdAt: Date;
  vec: number[];
  isSummary: boolean;
};

function dot(a: number[], b: number[]): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** Groups of linked memories (union-find over pairs above the threshold), each with ≥ 2 members. */
export function groupCandidates(items: Candidate[], threshold: number): Candidate[][] {
  const parent = items.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]!]!;
      i = parent[i]!;
    }
    return i;
  };
  for (let i = 0; i < items.length; i++) {
    for (let j = i + 1; j < items.length; j++) {
      const a = items[i]!;
      const b = items[j]!;
      if (a.agentId !== b.agentId) continue;
      if (a.isSummary && b.isSummary) continue;
      if (a.isSummary && b.createdAt <= a.createdAt) continue;
      if (b.isSummary && a.createdAt <= b.createdAt) continue;
      // Vectors are L2-normalised, so the dot product is the cosine similarity.
      if (dot(a.vec, b.vec) >= threshold) parent[find(j)] = find(i);
    }
  }
  const groups = new Map<number, Candidate[]>();
  items.forEach((c, i) => {
    const r = find(i);
    groups.set(r, [...(groups.get(r) ?? []), c]);
  });
  return [...groups.values()].filter((g) => g.length >= 2 && g.some((c) => !c.isSummary));
}

/** The job handler: runs one compaction job to completion (or failure, recorded on the job). */
export async function runCompaction(ctx: MemoryContext, jobId: string): Promise<void> {
  const db = ctx.deps.db.orm;
  const [job] = await db.select().from(memoryCompactionJobs).where(eq(memoryCompactionJobs.id, jobId));
  if (!job || job.status === 'completed' || job.status === 'failed') return;
  const startedAt = ctx.deps.clock.now();
  await db
    .update(memoryCompactionJobs)
    .set({ status: 'processing', startedAt })
    .where(eq(memoryCompactionJobs.id, jobId));
  try {
    const counts = await compactCollection(ctx, job);
    const now = ctx.deps.clock.now();
    await db
      .update(memoryCompactionJobs)
      .set({ status: 'completed', completedAt: now, ...counts })
      .where(eq(memoryCompactionJobs.id, jobId));
    await db
      .update(memoryCollections)
      .set({ lastCompactionAt: now })
      .where(eq(memoryCollections.id, job.collectionId));
  } catch (err) {
    ctx.deps.log.error({ err, jobId }, 'memory compaction failed');
    await db
      .update(memoryCompactionJobs)
      .set({
        status: 'failed',
        completedAt: ctx.deps.clock.now(),
        error: err instanceof Error ? err.message.slice(0, 500) : 'failed',
      })
      .where(eq(memoryCompactionJobs.id, jobId));
  }
}

async function compactCollection(ctx: MemoryContext, job: JobRow) {
  const { rows, byId, candidates } = await loadCandidates(ctx, job);
  const groups = groupCandidates(candidates, job.threshold);
  let archived = 0;
  for (const group of groups) {
    await replaceWithSummary(ctx, job, group, byId);
    archived += group.length;
  }
  return { memoriesProcessed: rows.length, memoriesCreated: groups.length, memoriesArchived: archived };
}

/** The collection's live memories with a vector from the organization's active embedder, oldest first. */
async function loadCandidates(ctx: MemoryContext, job: JobRow) {
  const db = ctx.deps.db.orm;
  const active = await activeEmbedder(ctx.deps, job.orgId);
  const slot = slotOf(active.generation);
  const rows = await db
    .select({
      id: memories.id,
      content: memories.content,
      agentId: memories.agentId,
      confidence: memories.confidence,
      tags: memories.tags,
      metadata: memories.metadata,
      createdAt: memories.createdAt,
      updatedAt: memories.updatedAt,
      type: memories.type,
      tier: memories.tier,
      vec: sql<string>`${sql.raw(slot.vec)}::text`,
    })
    .from(memories)
    .where(
      and(
        eq(memories.collectionId, job.collectionId),
        eq(memories.orgId, job.orgId),
        eq(memories.environment, job.environment),
        ne(memories.tier, 'archived'),
        // Similarities mean something only between vectors of one embedder: the active one.
        sql.raw(`${slot.model} = ${literal(active.model)} AND ${slot.vec} IS NOT NULL`),
      ),
    )
    .orderBy(asc(memories.createdAt), asc(memories.id))
    .limit(COMPACTION_MAX_PER_RUN);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const candidates: Candidate[] = rows.map((r) => ({
    ...r,
    vec: JSON.parse(r.vec) as number[],
    isSummary: Array.isArray(r.metadata.sourceMemoryIds),
  }));
  return { rows, byId, candidates };
}

type Loaded = Awaited<ReturnType<typeof loadCandidates>>;

/** Summarises one group into a new memory and archives its members, keeping their history. */
async function replaceWithSummary(ctx: MemoryContext, job: JobRow, group: Candidate[], byId: Loaded['byId']) {
  const { text, model } = await ctx.summarizer.summarize(group.map((g) => g.content));
  const now = ctx.deps.clock.now();
  const ids = group.map((g) => g.id);
  const scope = { orgId: job.orgId, environment: job.environment };
  await writeEmbedded(ctx, scope, [text], async (tx, e) => {
    await tx.insert(memoryHistory).values(
      group.map((g) => {
        const r = byId.get(g.id)!;
        return {
          memoryId: g.id,
          orgId: job.orgId,
          environment: job.environment,
          content: r.content,
          type: r.type,
          tier: r.tier,
          confidence: r.confidence,
          tags: r.tags,
          metadata: r.metadata,
          event: 'compacted' as const,
          validFrom: r.updatedAt,
          validTo: now,
        };
      }),
    );
    await tx.update(memories).set({ tier: 'archived', updatedAt: now }).where(inArray(memories.id, ids));
    await tx
      .insert(memories)
      .values({
        orgId: job.orgId,
        environment: job.environment,
        agentId: group[0]!.agentId,
        collectionId: job.collectionId,
        content: text,
        contentHash: contentHash(text),
        type: 'semantic',
        tier: 'warm',
        confidence: Math.max(...group.map((g) => g.confidence)),
        tags: [...new Set(group.flatMap((g) => g.tags))],
        metadata: {
          sourceMemoryIds: ids,
          compaction: { jobId: job.id, strategy: job.strategy, model },
        },
        ...vectorColumns(e!, 0),
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing();
  });
}
