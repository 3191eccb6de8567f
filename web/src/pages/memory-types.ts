// Shapes of the memory functions' answers (src/platform/memory-dashboard.ts) and small helpers.

export type Env = 'production' | 'sandbox';
export const MEMORY_TYPES = ['episodic', 'semantic', 'procedural', 'identity'] as const;
export const MEMORY_TIERS = ['hot', 'warm', 'cold', 'archived'] as const;

export type OffsetPage<T> = { items: T[]; total: number; hasMore: boolean };

export type Agent = {
  id: string;
  name: string;
  description: string | null;
  memoryCount: number;
  createdAt: string;
};
export type AgentPage = OffsetPage<Agent> & { memoriesWithoutAgent: number };
export type Collection = { id: string; name: string; memoryCount: number };

export type Memory = {
  id: string;
  content: string;
  type: (typeof MEMORY_TYPES)[number];
  tier: (typeof MEMORY_TIERS)[number];
  confidence: number;
  accessCount: number;
  tags: string[];
  metadata: Record<string, unknown>;
  agentId: string | null;
  collectionId: string | null;
  embeddingModel: string;
  createdAt: string;
  updatedAt: string;
  lastAccessedAt: string | null;
};
export type Recalled = Memory & { similarity: number; foundBy?: 'vector' | 'keyword' | 'both' };
export type HistoryEntry = {
  content: string;
  type: Memory['type'];
  tier: Memory['tier'];
  confidence: number;
  tags: string[];
  event: 'updated' | 'archived' | 'compacted';
  validFrom: string;
  validTo: string;
};
export type MemoryDetail = { memory: Memory; history: HistoryEntry[] };

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
