import { describe, expect, it } from 'vitest';
import {
  cosine,
  embedLocal,
  embedLocalMany,
  localEmbedderModelId,
  parseLocalEmbedderId,
} from './local-embedder.ts';

describe('local embedder', () => {
  it('is deterministic and L2-normalised at the configured dimension', () => {
    const a = embedLocal('Invoices are due within thirty days of delivery.');
    const b = embedLocal('Invoices are due within thirty days of delivery.');
    expect(a).toHaveLength(384);
    expect(Array.from(a)).toEqual(Array.from(b));
    const norm = Math.sqrt(a.reduce((s, x) => s + x * x, 0));
    expect(norm).toBeCloseTo(1, 5);
    expect(embedLocal('hello', 64)).toHaveLength(64);
  });

  it('gives an all-zero vector for text without letters or digits', () => {
    expect(Array.from(embedLocal(' ... !!! ')).every((x) => x === 0)).toBe(true);
  });

  it('puts similar texts closer than unrelated ones', () => {
    const [q, near, far] = embedLocalMany([
      'How do I reset my account password?',
      'Resetting the password of your account takes two minutes.',
      'Our bakery sells sourdough bread every Saturday morning.',
    ]);
    expect(cosine(q!, near!)).toBeGreaterThan(cosine(q!, far!) + 0.2);
  });

  it('ignores case and accents, and tolerates inflection through character trigrams', () => {
    expect(cosine(embedLocal('Café Crème'), embedLocal('cafe creme'))).toBeCloseTo(1, 5);
    expect(cosine(embedLocal('shipping invoices'), embedLocal('shipped invoice'))).toBeGreaterThan(
      cosine(embedLocal('shipping invoices'), embedLocal('garden flowers')),
    );
  });

  it('names itself with its dimension and version', () => {
    expect(localEmbedderModelId()).toBe('pier-local/hash-384-v1');
    expect(parseLocalEmbedderId('pier-local/hash-128-v1')).toEqual({ dimension: 128 });
    expect(parseLocalEmbedderId('pier-local/hash-1-v1')).toBeNull();
    expect(parseLocalEmbedderId('openai/text-embedding-3-small')).toBeNull();
  });
});
