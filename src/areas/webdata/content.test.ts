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

describe('markdown keeps what documentation needs', () => {
  const base = 'https://docs.test/library/json.html';

  it('keeps Sphinx-style <pre> code (no <code>) as fenced blocks with the language from the class', () => {
    const html = `<html><body><div role="main"><h1>json<a class="headerlink" href="#json">¶</a></h1><p>Encoding basic Python object hierarchies:</p>
      <div class="highlight-python3 notranslate"><div class="highlight"><pre><span></span><span class="gp">&gt;&gt;&gt; </span><span class="kn">import</span> json
<span class="gp">&gt;&gt;&gt; </span>json.dumps([<span class="s1">'foo'</span>, {<span class="s1">'bar'</span>: (<span class="s1">'baz'</span>, <span class="kc">None</span>)}])
</pre></div></div>
      <pre><code class="language-js">const x = a * b;</code></pre>
      <div class="highlight-default notranslate"><div class="highlight"><pre>x = 1  # \`\`\` inside</pre></div></div>
      <p>${'More text about the module. '.repeat(20)}</p></div></body></html>`;
    const md = toMarkdown(html, base);
    expect(md).toContain("```python3\n>>> import json\n>>> json.dumps(['foo', {'bar': ('baz', None)}])\n```");
    expect(md).toContain('```js\nconst x = a * b;\n```');
    // No language claimed for "default", and a fence longer than any backtick run in the code.
    expect(md).toContain('````\nx = 1  # ``` inside\n````');
    expect(md).not.toContain('\\>');
  });

  it('renders a table whose cells hold several paragraphs as a valid GFM table, one line per row', () => {
    const html = `<html><body><main><h1>Options</h1><p>${'The options this tool reads. '.repeat(10)}</p>
      <table><thead><tr><th>Option</th><th>Meaning</th></tr></thead><tbody>
      <tr><td><code>-v</code></td><td><p>Verbose output.</p><p>Repeat it for more | detail.</p></td></tr>
      <tr><td><code>-q</code></td><td>Quiet.<br>Nothing printed.</td></tr>
      <tr><td colspan="2">All options may be combined.</td></tr>
      </tbody></table></main></body></html>`;
    const md = toMarkdown(html, base);
    const table = md.split('\n').filter((l) => l.startsWith('|'));
    expect(table).toEqual([
      '| Option | Meaning |',
      '| --- | --- |',
      '| `-v` | Verbose output.<br>Repeat it for more \\| detail. |',
      '| `-q` | Quiet.<br>Nothing printed. |',
      '| All options may be combined. | |',
    ]);
  });

  it("keeps a table of contents' links with their #fragments, resolved against the page", () => {
    const html = `<html><body><div role="main"><h1>Guide</h1><div class="contents"><ul>
      <li><a href="#install">Install</a></li><li><a href="#configure">Configure</a></li>
      <li><a href="other.html#top">Other page</a></li></ul></div>
      <h2 id="install">Install</h2><p>${'Run the installer and follow it. '.repeat(15)}</p>
      <h2 id="configure">Configure</h2><p>${'Edit the configuration file. '.repeat(15)}</p></div></body></html>`;
    const md = toMarkdown(html, base);
    expect(md).toContain('- [Install](https://docs.test/library/json.html#install)');
    expect(md).toContain('- [Configure](https://docs.test/library/json.html#configure)');
    expect(md).toContain('- [Other page](https://docs.test/library/other.html#top)');
  });

  it("keeps an index page's list of links as its content, not the footer", () => {
    const entries = ['os', 'io', 'time', 'argparse', 'logging', 'getpass', 'curses', 'platform', 'errno'];
    const items = entries.map((m) => `<li class="toctree-l1"><a href="${m}.html">${m} — module</a></li>`);
    const html = `<html><head><title>Generic Operating System Services</title></head><body>
      <div class="related" role="navigation"><a href="../index.html">Docs</a></div>
      <div class="document"><div class="body" role="main"><h1>Generic Operating System Services</h1>
      <p>The modules described in this chapter provide interfaces to operating system features.</p>
      <div class="toctree-wrapper compound"><ul>${items.join('')}</ul></div></div></div>
      <div class="footer">© Copyright 2001-2023, Python Software Foundation. Last updated on Oct 07, 2026.</div>
      </body></html>`;
    const md = toMarkdown(html, 'https://docs.test/library/allos.html');
    expect(md).toContain('# Generic Operating System Services');
    for (const m of entries) expect(md).toContain(`- [${m} — module](https://docs.test/library/${m}.html)`);
    expect(md).not.toContain('Copyright');
  });

  it('keeps the page title heading above an article Readability extracts', () => {
    const paras = Array.from(
      { length: 6 },
      (_, i) => `<p>${`Paragraph ${i} of the story, with details. `.repeat(8)}</p>`,
    );
    const html = `<html><head><title>Rail line reopens | News</title></head><body><header><a href="/">News</a></header>
      <article><h1>Rail line reopens</h1>${paras.join('')}</article><aside>Related stories</aside></body></html>`;
    const md = toMarkdown(html, 'https://news.test/a');
    expect(md.startsWith('# Rail line reopens\n')).toBe(true);
    expect(md).toContain('Paragraph 5 of the story');
    expect(md).not.toContain('Related stories');
  });
});

describe('a real-sized page', () => {
  it('converts a 750 KB documentation page well within the 20 s page timeout, keeping its code and tables', () => {
    const section = (i: number) =>
      `<section id="s${i}"><h2>Function ${i}<a class="headerlink" href="#s${i}">¶</a></h2>` +
      `<p>${`Describes what function ${i} does, its arguments and what it returns. `.repeat(6)}</p>` +
      `<div class="highlight-python3 notranslate"><div class="highlight"><pre><span class="n">f${i}</span>(<span class="mi">1</span>, <span class="s">"x"</span>)\n</pre></div></div>` +
      `<table class="docutils"><thead><tr><th>Argument</th><th>Meaning</th></tr></thead><tbody>` +
      `<tr><td>a</td><td><p>The first.</p><p>Required.</p></td></tr><tr><td>b</td><td>The second.</td></tr></tbody></table></section>`;
    const sections = Array.from({ length: 850 }, (_, i) => section(i)).join('');
    const nav = Array.from({ length: 300 }, (_, i) => `<li><a href="m${i}.html">Module ${i}</a></li>`).join(
      '',
    );
    const html = `<html><head><title>Reference</title></head><body><div class="sphinxsidebar" role="navigation"><ul>${nav}</ul></div><div class="body" role="main"><h1>Reference</h1>${sections}</div><div class="footer">© Copyright</div></body></html>`;
    expect(html.length).toBeGreaterThan(700_000);
    const t0 = performance.now();
    const md = toMarkdown(html, 'https://docs.test/library/ref.html');
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(md.match(/^```python3$/gm)).toHaveLength(850);
    expect(md.match(/^\| Argument \| Meaning \|$/gm)).toHaveLength(850);
    expect(md).toContain('| a | The first.<br>Required. |');
    expect(md).not.toContain('Module 299');
    expect(md).not.toContain('Copyright');
  });
});
