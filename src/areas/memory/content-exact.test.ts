import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { memoryTenant } from '../../../test/memory-kit.ts';
import { LIMITS } from './schema.ts';

// The contract's memory content is the client's text: stored and returned exactly as sent. Duplicates are
// still folded by a whitespace-insensitive fingerprint, but the stored text stays the first client's.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});

/** JSON as Python's json.dumps writes it by default: every non-ASCII character as a \uXXXX escape. */
const asciiJson = (v: unknown) =>
  JSON.stringify(v).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

describe('memory content exactly as sent', () => {
  it('keeps whitespace, newlines and surrounding spaces on store, batch, read, list and update', async () => {
    const { live } = await memoryTenant(t);
    const text = '  Line one\n\n\tindented  line two   \r\n';
    const one = await live.post('/memory/memories', { content: text });
    expect(one.statusCode).toBe(201);
    expect(one.json().content).toBe(text);
    expect((await live.get(`/memory/memories/${one.json().id}`)).json().content).toBe(text);
    expect(
      (await live.get('/memory/memories')).json().items.map((m: { content: string }) => m.content),
    ).toEqual([text]);

    const batch = await live.post('/memory/memories/batch', {
      memories: [{ content: 'a\nb' }, { content: ' c ' }],
    });
    expect(batch.json().memories.map((m: { content: string }) => m.content)).toEqual(['a\nb', ' c ']);

    const updated = await live.patch(`/memory/memories/${one.json().id}`, { content: 'new\n  text ' });
    expect(updated.statusCode).toBe(200);
    expect(updated.json().content).toBe('new\n  text ');
    expect((await live.get(`/memory/memories/${one.json().id}`)).json().content).toBe('new\n  text ');
  });

  it('still folds duplicates that differ only in whitespace, keeping the stored text', async () => {
    const { live } = await memoryTenant(t);
    const first = await live.post('/memory/memories', { content: 'Ships\non Mondays' });
    const dup = await live.post('/memory/memories', { content: '  Ships on   Mondays ' });
    expect(dup.json().id).toBe(first.json().id);
    expect(dup.json().content).toBe('Ships\non Mondays');
  });

  it('refuses blank content with 400', async () => {
    const { live } = await memoryTenant(t);
    for (const content of ['', '   ', '\n\t ']) {
      const r = await live.post('/memory/memories', { content });
      expect(r.statusCode, JSON.stringify(content)).toBe(400);
      expect(r.json().error.code).toBe('VALIDATION_ERROR');
    }
  });

  it(`accepts a full batch at the limits: ${LIMITS.batch} × ${LIMITS.contentChars} characters, ASCII-escaped`, async () => {
    const { live, tenant } = await memoryTenant(t);
    const memories = Array.from({ length: LIMITS.batch }, (_, i) => {
      const head = `Mémoire ${i} — `;
      return { content: head + 'é'.repeat(LIMITS.contentChars - head.length) };
    });
    const body = asciiJson({ memories });
    expect(body.length).toBeGreaterThan(18 * 1024 * 1024);
    const r = await t.v1('POST', '/memory/memories/batch', tenant.live, body);
    expect(r.statusCode, r.body.slice(0, 200)).toBe(201);
    expect(r.json().created).toBe(LIMITS.batch);
    const stored = await live.get(`/memory/memories/${r.json().memories[7].id}`);
    expect(stored.json().content).toBe(memories[7]!.content);
  }, 120_000);
});
