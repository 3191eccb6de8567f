import crypto from 'node:crypto';
import { EXTRACTIVE_SUMMARY_MODEL, summarizeExtractive } from '../../core/ai/extractive-summary.ts';
import { embedLocalMany, localEmbedderModelId } from '../../core/ai/local-embedder.ts';

// What memory needs from the models area: an embedder whose dimension matches the column, and a
// summariser for compaction. Both are the built-in deterministic ones of src/core/ai (docs/memory.md says
// why configured models are not used here yet).

export type Embedder = { id: string; dimension: number; embed(texts: string[]): Promise<number[][]> };
export type Summarizer = { summarize(texts: string[]): Promise<{ text: string; model: string }> };

/** The installation's vector column is vector(384); every embedder memory uses must produce 384 numbers. */
export const MEMORY_DIMENSION = 384;

export function defaultEmbedder(): Embedder {
  return {
    id: localEmbedderModelId(MEMORY_DIMENSION),
    dimension: MEMORY_DIMENSION,
    embed: async (texts) => embedLocalMany(texts, MEMORY_DIMENSION),
  };
}

export function defaultSummarizer(): Summarizer {
  return {
    summarize: async (texts) => ({
      text: summarizeExtractive(texts, { maxSentences: 3 }),
      model: EXTRACTIVE_SUMMARY_MODEL,
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
