import { describe, expect, it } from 'vitest';
import { canonicalUrl, pageLinks, parseDocument, toMarkdown } from './content.ts';
import { normalizeUrl, sameSite } from './crawl-site.ts';
import { needsJavaScript } from './fetch-page.ts';
import { compareText, slotOf } from './schedules.ts';

// The pure parts of web data: the needs-JavaScript heuristic, markdown on pages Readability gives up on,
// link and URL handling, change scores and schedule slots. No database, no network.

describe('needsJavaScript', () => {
  it.each([
    [
      'an empty app root with a script',
      '<body><div id="root"></div><script src="/a.js"></script></body>',
      true,
    ],
    [
      'a noscript asking for JavaScript',
      '<body><p>Hi</p><noscript>Please enable JavaScript.</noscript><script></script></body>',
      true,
    ],
    ['no text at all but scripts', '<body><div class="x"></div><script>1</script></body>', true],
    ['a plain page without scripts', '<body><div id="root"></div></body>', false],
    ['a page with content and scripts', `<body><p>${'word '.repeat(60)}</p><script>1</script></body>`, false],
  ])('%s → %s', (_name, html, expected) => {
    expect(needsJavaScript(`<html>${html}</html>`)).toBe(expected);
  });
});

describe('markdown', () => {
  it('converts the whole body of a list-heavy page that Readability would cut', () => {
    const items = Array.from({ length: 20 }, (_, i) => `<li><a href="/p/${i}">Product ${i}</a></li>`).join(
      '',
    );
    const md = toMarkdown(
      `<html><body><nav>Menu</nav><h1>Catalogue</h1><ul>${items}</ul></body></html>`,
      'https://shop.test/',
    );
    expect(md).toContain('# Catalogue');
    expect(md).toContain('- [Product 19](https://shop.test/p/19)');
    expect(md).not.toContain('Menu');
  });

  it('resolves links against <base> and skips nofollow and non-http links', () => {
    const doc = parseDocument(
      '<html><head><base href="https://a.test/docs/"><link rel="canonical" href="/docs/intro"></head><body>' +
        '<a href="intro">i</a><a href="mailto:x@y">m</a><a rel="nofollow" href="/ads">ad</a><a href="#top">t</a></body></html>',
    );
    expect(pageLinks(doc, 'https://a.test/x')).toEqual(['https://a.test/docs/intro', 'https://a.test/docs/']);
    expect(canonicalUrl(doc, 'https://a.test/x')).toBe('https://a.test/docs/intro');
  });
});

describe('URLs', () => {
  it('normalises fragments away and treats www as the same site', () => {
    expect(normalizeUrl('https://a.test/x?#frag')).toBe('https://a.test/x');
    expect(normalizeUrl('https://a.test:443/x')).toBe('https://a.test/x');
    expect(normalizeUrl('javascript:alert(1)')).toBeNull();
    expect(sameSite('https://www.a.test/', 'https://a.test/b')).toBe(true);
    expect(sameSite('https://b.test/', 'https://a.test/b')).toBe(false);
  });
});

describe('change detection', () => {
  it('scores identical text 0, small edits low and a rewrite high', () => {
    const text = 'The price of the oak chair is 149 euros and it ships in two days.';
    expect(compareText(text, text)).toEqual({ score: 0, diff: null });
    const small = compareText(text, text.replace('149', '159'));
    expect(small.score).toBeGreaterThan(0);
    expect(small.score).toBeLessThan(0.1);
    expect(small.diff).toContain('-The price of the oak chair is 149');
    expect(small.diff).toContain('+The price of the oak chair is 159');
    expect(compareText(text, 'Completely different words here now.').score).toBeGreaterThan(0.5);
  });

  it('puts runs in UTC hour, day and ISO-week slots', () => {
    const at = new Date('2026-11-26T15:42:10Z'); // a Thursday
    expect(slotOf('hourly', at).toISOString()).toBe('2026-11-26T15:00:00.000Z');
    expect(slotOf('daily', at).toISOString()).toBe('2026-11-26T00:00:00.000Z');
    expect(slotOf('weekly', at).toISOString()).toBe('2026-11-23T00:00:00.000Z');
    expect(slotOf('weekly', new Date('2026-11-29T23:00:00Z')).toISOString()).toBe('2026-11-23T00:00:00.000Z');
  });
});
