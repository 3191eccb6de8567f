import { describe, expect, it } from 'vitest';
import { answerObject, okEncoded, okResult } from './dispatch.ts';

// A function tool's answer is spliced from the function's JSON: it must read back as the object form would.

describe('okEncoded', () => {
  it('reads back as okResult, wrapped or not, with quotes and non-ASCII in the text', () => {
    const value = { name: 'a "quoted" café\n', n: 1, list: [{ x: null }] };
    const json = JSON.stringify(value);
    expect(answerObject(okEncoded(json, false))).toEqual(okResult(value, false));
    expect(answerObject(okEncoded(JSON.stringify([value]), true))).toEqual(okResult([value], true));
  });

  it('cuts a long result’s text and keeps all of structuredContent', () => {
    const value = { items: Array.from({ length: 500 }, (_, i) => `item-${i}`) };
    const json = JSON.stringify(value);
    const out = answerObject(okEncoded(json, false));
    expect(out.structuredContent).toEqual(value);
    expect(out.content[0]!.text).toBe(
      `${json.slice(0, 4000)}… (${json.length} characters; the whole result is in structuredContent)`,
    );
  });
});
