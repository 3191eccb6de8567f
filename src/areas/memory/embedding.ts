import crypto from 'node:crypto';
import { EXTRACTIVE_SUMMARY_MODEL, summarizeExtractive } from '../../core/ai/extractive-summary.ts';

// What memory needs from the models area: each organization's embedder (platform/embedders.ts; the
// configured model, or the built-in local one) and a summariser for compaction.

export type Summarizer = { summarize(texts: string[]): Promise<{ text: string; model: string }> };

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
