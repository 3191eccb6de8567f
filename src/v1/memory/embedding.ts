import crypto from 'node:crypto';
import { extractiveSummary } from '../../core/ai/extractive-summary.ts';
import { createLocalEmbedder, type Embedder } from '../../core/ai/local-embedder.ts';

// What memory needs from the models area: an embedder whose dimension matches the column, and a
// summariser for compaction. Until src/core/ai has a model registry these are the built-in fallbacks.

export type { Embedder };
export type Summarizer = { summarize(texts: string[]): Promise<{ text: string; model: string }> };

/** The installation's vector column is vector(384); every embedder memory uses must produce 384 numbers. */
export const MEMORY_DIMENSION = 384;

export function defaultEmbedder(): Embedder {
  return createLocalEmbedder({ dimension: MEMORY_DIMENSION });
}

export function defaultSummarizer(): Summarizer {
  return {
    summarize: async (texts) => ({
      text: extractiveSummary(texts, { maxSentences: 3 }),
      model: 'extractive',
    }),
  };
}

/** Exact-duplicate fingerprint: whitespace-insensitive, case-sensitive. */
export function contentHash(text: string): string {
  return crypto.createHash('sha256').update(normalizeContent(text)).digest('hex');
}

export function normalizeContent(text: string): string {
  return text.trim().replace(/\s+/g, ' ');
}

export function toVectorLiteral(v: number[]): string {
  return `[${v.join(',')}]`;
}
