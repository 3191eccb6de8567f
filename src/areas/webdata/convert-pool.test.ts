import { afterEach, describe, expect, it } from 'vitest';
import { ConvertPool } from './convert-pool.ts';

// The crawl's conversion threads: a page is parsed once in a thread into its title, canonical URL, links
// and markdown; a conversion over its time limit fails that page alone and the pool goes on with a new
// thread. No database, no network.

const page = (n: number) =>
  `<html><head><title>Page ${n}</title><link rel="canonical" href="/p/${n}"></head><body><nav><a href="/">Home</a></nav>` +
  `<main><h1>Page ${n}</h1><p>${'Some words of the page. '.repeat(30)}</p><a href="/p/${n + 1}#top">next</a>` +
  `<div class="highlight-python"><pre>print(${n})</pre></div></main></body></html>`;

let pool: ConvertPool | null = null;
afterEach(async () => {
  await pool?.close();
  pool = null;
});

describe('conversion threads', () => {
  it('convert pages in threads, several at once, with what the crawl stores', async () => {
    pool = new ConvertPool(2, 30_000);
    const out = await Promise.all(
      [1, 2, 3, 4, 5].map((n) => pool!.digest(page(n), `https://s.test/p/${n}`, true)),
    );
    expect(out.map((d) => d.title)).toEqual(['Page 1', 'Page 2', 'Page 3', 'Page 4', 'Page 5']);
    expect(out[2]!.canonical).toBe('https://s.test/p/3');
    expect(out[2]!.links).toEqual(['https://s.test/', 'https://s.test/p/4']);
    expect(out[2]!.markdown).toContain('# Page 3');
    expect(out[2]!.markdown).toContain('[next](https://s.test/p/4#top)');
    expect(out[2]!.markdown).toContain('```python\nprint(3)\n```');
    expect(out[2]!.markdown).not.toContain('Home');
    const noMarkdown = await pool.digest(page(9), 'https://s.test/p/9', false);
    expect(noMarkdown.markdown).toBeNull();
  });

  it('fails a conversion that outlives its limit, alone, and goes on with a new thread', async () => {
    // ~8 MB of nested tables: tens of seconds of conversion, far over the 2 s limit on any machine; a small
    // page converts in milliseconds, far under it even on a loaded one.
    const cells = '<table><tr><td><p>cell</p><p>more</p></td><td>x</td></tr></table>'.repeat(120_000);
    const big = `<html><body><main>${cells}</main></body></html>`;
    pool = new ConvertPool(1, 2000);
    const t0 = Date.now();
    const slow = pool.digest(big, 'https://s.test/big', true);
    const next = pool.digest(page(1), 'https://s.test/p/1', true);
    await expect(slow).rejects.toThrow('Timeout: converting the page took over 2 s.');
    // The next page waits for a new thread; its start-up is not counted against the page's limit.
    expect((await next).title).toBe('Page 1');
    expect(Date.now() - t0).toBeLessThan(15_000);
  });

  it('converts inline with no threads', async () => {
    pool = new ConvertPool(0, 1000);
    expect((await pool.digest(page(1), 'https://s.test/p/1', true)).title).toBe('Page 1');
  });
});
