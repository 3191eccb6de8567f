// Types and small helpers of the memory pages.
import type { FnInput, FnOutput } from '../../../src/sdk/types.ts';

// The memory functions' answers, typed from the server's own schemas (src/areas/memory/dashboard-fn.ts)
// through the SDK, so the page cannot drift from what the server sends.

export type Env = FnInput<'listMemoriesForCli'>['environment'];
export const MEMORY_TYPES = ['episodic', 'semantic', 'procedural', 'identity'] as const;
export const MEMORY_TIERS = ['hot', 'warm', 'cold', 'archived'] as const;

export type OffsetPage<T> = { items: T[]; total: number; hasMore: boolean };
export type AgentPage = FnOutput<'listMemoryAgentsForCli'>;
export type Agent = AgentPage['items'][number];
export type Collection = FnOutput<'listMemoryCollectionsForCli'>['items'][number];
export type MemoryDetail = FnOutput<'getMemoryForCli'>;
export type Memory = MemoryDetail['memory'];
export type HistoryEntry = MemoryDetail['history'][number];
export type Recalled = FnOutput<'recallMemoriesForCli'>['memories'][number];

/** The agent whose memories are shown: one agent, or every memory of the environment. */
export type AgentChoice = { kind: 'agent'; id: string; name: string } | { kind: 'all' };

/** Where the page looks: one organization, one environment. */
export type MemoryScope = { orgSlug: string; environment: Env };

export function excerpt(text: string, max = 140): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** Two decimals, so 0.874 and 0.87 read alike in a list. */
export const fmtScore = (n: number) => n.toFixed(2);
