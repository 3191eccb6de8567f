import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { hasVector, memoryTenant } from '../../../test/memory-kit.ts';
import { termFrequency } from './keyword-rank.ts';

// What a user storing a conversation notices: the turn about the thing asked comes first, not one that
// shares only the speaker's name and "did"; keyword search answers a question asked in plain words;
// `threshold` cuts at the same similarity whatever the mode.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});
beforeEach(({ skip }) => {
  if (!hasVector(t)) skip();
});

type M = { id: string; content: string; similarity: number; foundBy?: string; rank?: number };
const contents = (r: { json(): { memories: M[] } }) => r.json().memories.map((m) => m.content);

// A chat stored one turn per memory: most turns share the speakers' names and the commonest words.
const CHAT = [
  'Caroline: Hey Melanie! What did you do this weekend?',
  'Melanie: Wow, did you see the game last night, Caroline?',
  'Caroline: What did you think of it? I did not watch it.',
  'Melanie: Did you get my message earlier, Caroline?',
  'Caroline: I went to the adoption agency meeting yesterday, they explained the home study.',
  'Melanie: What did Caroline say? Wow, did you do it?',
  'Caroline: Did you finish the painting you started?',
  'Melanie: My painting of the sunset is in the art show now.',
  'Caroline: What a week, did you sleep at all?',
  'Melanie: Did you call your grandma, Caroline?',
];

describe('recall ranks by the words that carry the meaning', () => {
  it('puts the turn about the adoption meeting first, by default and in each leg', async () => {
    const { live } = await memoryTenant(t);
    expect(
      (await live.post('/memory/memories/batch', { memories: CHAT.map((content) => ({ content })) }))
        .statusCode,
    ).toBe(201);
    const question = 'What did Caroline do at the adoption meeting?';
    for (const mode of [undefined, 'hybrid', 'vector', 'keyword']) {
      const r = await live.post('/memory/memories/recall', {
        query: question,
        limit: 3,
        ...(mode ? { mode } : {}),
      });
      expect(r.statusCode).toBe(200);
      expect(contents(r)[0], `mode ${mode ?? 'default'}`).toBe(CHAT[4]);
    }
    // The default fuses both legs and says which found each result.
    const d = (await live.post('/memory/memories/recall', { query: question, limit: 3 })).json();
    expect(d.memories[0].foundBy).toBe('both');
    for (const m of d.memories) expect(['vector', 'keyword', 'both']).toContain(m.foundBy);
  });

  it('a memory sharing only common words loses to one sharing the rare word', async () => {
    const { live } = await memoryTenant(t);
    const filler = Array.from({ length: 12 }, (_, i) => ({
      content: `Note ${i}: the team did the usual weekly things`,
    }));
    await live.post('/memory/memories/batch', {
      memories: [
        ...filler,
        { content: 'The team did the weekly things again and the usual team things' },
        { content: 'Kubernetes upgrade scheduled' },
      ],
    });
    const r = await live.post('/memory/memories/recall', {
      query: 'did the team do the Kubernetes things',
      limit: 2,
    });
    expect(contents(r)[0]).toBe('Kubernetes upgrade scheduled');
  });
});

describe('keyword search ranks and does not require every word', () => {
  it('answers a natural-language question with the best match first', async () => {
    const { live } = await memoryTenant(t);
    await live.post('/memory/memories/batch', { memories: CHAT.map((content) => ({ content })) });
    const r = await live.get('/memory/memories/search', {
      q: 'When did Caroline go to the adoption agency?',
    });
    expect(r.statusCode).toBe(200);
    const got = r.json().memories as M[];
    expect(got[0]!.content).toBe(CHAT[4]);
    expect(got.length).toBeGreaterThan(1); // turns naming Caroline match too, ranked lower
    for (let i = 1; i < got.length; i++) expect(got[i]!.rank).toBeLessThanOrEqual(got[i - 1]!.rank!);
  });

  it('honours quoted phrases and -word, and answers [] when no word is present', async () => {
    const { live } = await memoryTenant(t);
    await live.post('/memory/memories/batch', {
      memories: [
        { content: 'The home study visit is on Monday' },
        { content: 'Study for the exam at home' },
        { content: 'Monday standup moved to ten' },
      ],
    });
    const phrase = await live.get('/memory/memories/search', { q: '"home study" monday' });
    expect(contents(phrase)).toEqual(['The home study visit is on Monday']);
    const minus = await live.get('/memory/memories/search', { q: 'monday or exam -standup' });
    expect(contents(minus).sort()).toEqual([
      'Study for the exam at home',
      'The home study visit is on Monday',
    ]);
    const none = await live.get('/memory/memories/search', { q: 'zeppelin quasar' });
    expect(none.statusCode).toBe(200);
    expect(none.json()).toEqual({ memories: [], total: 0 });
  });
});

describe('threshold', () => {
  it('filters on the same similarity in every mode', async () => {
    const { live } = await memoryTenant(t);
    await live.post('/memory/memories/batch', {
      memories: [
        { content: 'The customer prefers invoices as PDF attachments' },
        { content: 'Invoices are due within thirty days' },
        { content: 'The office plant needs water on Fridays' },
      ],
    });
    const query = 'invoices as PDF attachments';
    const all = (await live.post('/memory/memories/recall', { query, mode: 'vector' })).json()
      .memories as M[];
    const sim = new Map(all.map((m) => [m.content, m.similarity]));
    const cut =
      (sim.get('The customer prefers invoices as PDF attachments')! +
        sim.get('Invoices are due within thirty days')!) /
      2;
    for (const mode of ['hybrid', 'vector', 'keyword']) {
      const r = (await live.post('/memory/memories/recall', { query, mode })).json().memories as M[];
      for (const m of r) expect(m.similarity, `${mode}: ${m.content}`).toBe(sim.get(m.content));
      const strict = await live.post('/memory/memories/recall', { query, mode, threshold: cut });
      expect(contents(strict), mode).toEqual(['The customer prefers invoices as PDF attachments']);
      for (const m of strict.json().memories as M[]) expect(m.similarity).toBeGreaterThanOrEqual(cut);
    }
  });
});

describe('BM25 term frequency', () => {
  it('recovers how often a word occurs from ts_rank, on this database', async () => {
    for (const [text, want] of [
      ['adoption meeting', 1],
      ['adoption, adoption', 2],
      ['adopt adopted adoption adopting', 4],
      ['meeting only', 0],
      [Array(12).fill('adoption').join(' '), 12],
    ] as const) {
      const r = await t.deps.db.orm.execute(
        sql`SELECT ${termFrequency('adopt')} AS tf FROM (SELECT to_tsvector('english', ${text}) AS search_tsv) m`,
      );
      expect(Number((r as unknown as { rows: { tf: number }[] }).rows[0]!.tf), text).toBe(want);
    }
  });
});
