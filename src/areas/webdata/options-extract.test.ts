import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import { settled, webdataTestApp } from '../../../test/webdata-kit.ts';
import { type Site, startSite } from '../../../test/webdata-site.ts';
import type { ManualClock } from '../../core/clock.ts';

// The scraper options of an extraction on the fetch path, through the API with the job worker, against
// the local test site: formats (html, rawHtml, links, images) in one extraction, includeTags /
// excludeTags / onlyMainContent, selector fields without a model, maxAge reuse (and its tenant
// boundary), and the 400s for a bad selector, format, action or combination. The browser path (actions,
// screenshot) is test/e2e/browser/webdata-actions.test.ts.

describe('web data extraction options', { timeout: 60_000 }, () => {
  let t: TestApp;
  let site: Site;
  let a: V1Tenant;
  let b: V1Tenant;

  beforeAll(async () => {
    site = await startSite();
    t = await webdataTestApp({ WEBDATA_FETCH_TIMEOUT_MS: '3000' });
    a = await seedV1Tenant(t.deps);
    b = await seedV1Tenant(t.deps);
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    await site?.close();
  });

  const extract = async (body: Record<string, unknown>, key = a.live) => {
    const res = await t.v1('POST', '/webdata/extractions', key, body);
    expect(res.statusCode, res.body).toBe(200);
    const x = await settled(t, key, `/webdata/extractions/${res.json().id}`, 600);
    expect(x.status, x.error).toBe('completed');
    return x;
  };

  it('returns markdown, html, rawHtml, links and images from one extraction', async () => {
    const x = await extract({
      url: `${site.url}/shop`,
      mode: 'markdown',
      formats: ['markdown', 'html', 'rawHtml', 'links', 'images'],
    });
    expect(x.markdown).toContain('## Pine table');
    expect(x.html).toContain('<h2>Pine table</h2>');
    expect(x.html).not.toContain('<nav>');
    expect(x.rawHtml).toContain('<nav><a href="/">Home</a>');
    expect(x.rawHtml).toContain('<title>Shop</title>');
    expect(x.links).toContain(`${site.url}/products/pine-table`);
    expect(x.images).toEqual([
      `${site.url}/img/oak-chair.png`,
      `${site.url}/img/pine-table.png`,
      `${site.url}/img/ash-stool.png`,
    ]);
    expect(x.screenshot).toBeUndefined();
  });

  it('formats without markdown leave it out; the contract fields stay as they were without formats', async () => {
    const only = await extract({ url: `${site.url}/shop`, mode: 'markdown', formats: ['links'] });
    expect(only.markdown).toBeNull();
    expect(only.links).toContain(`${site.url}/about`);
    expect(only.html).toBeUndefined();
    const plain = await extract({ url: `${site.url}/shop`, mode: 'markdown' });
    expect(plain.markdown).toContain('## Oak chair');
    expect(plain.links).toBeUndefined();
    expect(plain.rawHtml).toBeUndefined();
  });

  it('onlyMainContent false keeps navigation and footer; true (default) drops them', async () => {
    const main = await extract({ url: `${site.url}/shop`, mode: 'markdown' });
    expect(main.markdown).not.toContain('Members');
    expect(main.markdown).not.toContain('© Example site');
    const whole = await extract({ url: `${site.url}/shop`, mode: 'markdown', onlyMainContent: false });
    expect(whole.markdown).toContain(`[Members](${site.url}/private/secret)`);
    expect(whole.markdown).toContain('© Example site');
    expect(whole.markdown).toContain('## Oak chair');
  });

  it('includeTags makes the content exactly the matched elements; excludeTags removes elements', async () => {
    const inc = await extract({
      url: `${site.url}/shop`,
      mode: 'markdown',
      includeTags: ['.product h2', '.intro'],
      formats: ['markdown', 'html'],
    });
    expect(inc.markdown).toBe(
      'Hand-made furniture from the garden workshop, sold to order.\n\n## Oak chair\n\n## Pine table\n\n## Ash stool',
    );
    expect(inc.html).not.toContain('price');
    const exc = await extract({
      url: `${site.url}/shop`,
      mode: 'markdown',
      onlyMainContent: false,
      excludeTags: ['nav', 'footer', '.ad', '.price'],
    });
    expect(exc.markdown).toContain('## Pine table');
    expect(exc.markdown).not.toContain('Advertisement');
    expect(exc.markdown).not.toContain('€');
    expect(exc.markdown).not.toContain('Members');
  });

  it('reads a CSS selector field map without a model: text, numbers, attributes, lists, nested lists', async () => {
    const x = await extract({
      url: `${site.url}/shop`,
      selectors: {
        heading: 'h1',
        missing: '.no-such-thing',
        firstPrice: { selector: '.price', type: 'number' },
        names: { selector: '.product h2', list: true },
        products: {
          selector: '.product',
          list: true,
          fields: {
            name: 'h2',
            price: { selector: '.price', type: 'number' },
            url: { selector: 'a.more', attribute: 'href' },
            image: { selector: 'img', attribute: 'src' },
            alt: { selector: 'img', attribute: 'alt' },
          },
        },
      },
      formats: ['markdown'],
    });
    expect(x.mode).toBe('selectors');
    expect(x.extractedBy).toBe('selectors');
    expect(x.tokensUsed).toBe(0);
    expect(x.extractedData).toEqual({
      heading: 'Shop',
      missing: null,
      firstPrice: 149,
      names: ['Oak chair', 'Pine table', 'Ash stool'],
      products: [
        {
          name: 'Oak chair',
          price: 149,
          url: `${site.url}/products/oak-chair`,
          image: `${site.url}/img/oak-chair.png`,
          alt: 'Oak chair',
        },
        {
          name: 'Pine table',
          price: 1249.5,
          url: `${site.url}/products/pine-table`,
          image: `${site.url}/img/pine-table.png`,
          alt: 'Pine table',
        },
        {
          name: 'Ash stool',
          price: 59,
          url: `${site.url}/products/ash-stool`,
          image: `${site.url}/img/ash-stool.png`,
          alt: 'Ash stool',
        },
      ],
    });
    expect(x.markdown).toContain('## Oak chair');
  });

  it('reads XPath fields beside CSS ones: elements, attributes, text nodes and computed values', async () => {
    const x = await extract({
      url: `${site.url}/shop`,
      selectors: {
        heading: '//h1',
        count: 'count(//div[@class="product"])',
        second: '(//div[@class="product"])[2]/h2',
        cheap: {
          selector: '//div[@class="product"][number(translate(span, " €", "")) < 100]/h2',
          list: true,
        },
        urls: { selector: '//a[@class="more"]/@href', list: true },
        missing: '//table//td',
        products: {
          selector: '//div[contains(concat(" ", @class, " "), " product ")]',
          list: true,
          fields: {
            name: './h2/text()',
            price: { selector: './/span', type: 'number' },
            alt: 'string(./img/@alt)',
          },
        },
      },
    });
    expect(x.extractedBy).toBe('selectors');
    expect(x.extractedData).toEqual({
      heading: 'Shop',
      count: 3,
      second: 'Pine table',
      cheap: ['Ash stool'],
      urls: ['oak-chair', 'pine-table', 'ash-stool'].map((s) => `${site.url}/products/${s}`),
      missing: null,
      products: [
        { name: 'Oak chair', price: 149, alt: 'Oak chair' },
        { name: 'Pine table', price: 1249.5, alt: 'Pine table' },
        { name: 'Ash stool', price: 59, alt: 'Ash stool' },
      ],
    });
  });

  it('maxAge reuses a recent result of the same request by the same organization, and only that', async () => {
    const clock = t.deps.clock as ManualClock;
    const body = { url: `${site.url}/docs`, mode: 'markdown', maxAge: 60_000 };
    site.reset();
    const first = await extract(body);
    expect(first.fetchedWith).toBe('fetch');
    expect(site.hits.get('/docs')).toBe(1);

    const again = await extract(body);
    expect(again.fetchedWith).toBe('cache');
    expect(again.markdown).toBe(first.markdown);
    expect(site.hits.get('/docs')).toBe(1);

    // Other options, another organization, or no maxAge: fetched again.
    expect((await extract({ ...body, includeLinks: true })).fetchedWith).toBe('fetch');
    expect((await extract(body, b.live)).fetchedWith).toBe('fetch');
    expect((await extract({ url: body.url, mode: 'markdown' })).fetchedWith).toBe('fetch');
    expect(site.hits.get('/docs')).toBe(4);

    // Older than maxAge: fetched again.
    clock.advance(61_000);
    expect((await extract(body)).fetchedWith).toBe('fetch');
    expect(site.hits.get('/docs')).toBe(5);
  });

  it('answers 400 with a code for an invalid selector, format, action or combination', async () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ includeTags: ['div['] }, /includeTags.*not a valid CSS selector/],
      [{ excludeTags: ['p::before'] }, /not a valid CSS selector/],
      [{ selectors: { price: '.price:nth-child(' } }, /not a valid CSS selector/],
      [{ selectors: { price: '//span[@class="price"' } }, /not a valid XPath expression: expected '\]'/],
      [{ selectors: { price: '(foo(//span))' } }, /unknown function foo\(\)/],
      [{ selectors: { price: '(//span)[' } }, /not a valid XPath expression/],
      [{ selectors: { price: '//span[$p]' } }, /variables/],
      [{ includeTags: ['//main'] }, /XPath is taken by selector fields only/],
      [{ selectors: { price: { selector: '.price', type: 'date' } } }, /selectors/],
      [{ selectors: {} }, /at least one field/],
      [{ formats: ['markdown', 'pdf'] }, /formats/],
      [{ actions: [{ type: 'hover', selector: 'a' }] }, /actions/],
      [{ actions: [{ type: 'click' }] }, /actions/],
      [{ actions: [{ type: 'click', selector: 'button[' }] }, /not a valid CSS selector/],
      [{ actions: [{ type: 'wait' }] }, /milliseconds or selector/],
      [{ actions: [{ type: 'wait', milliseconds: 40_000 }] }, /actions/],
      [{ mode: 'selectors' }, /needs `selectors`/],
      [{ mode: 'markdown', selectors: { a: 'h1' } }, /mode "selectors"/],
      [{ mode: 'raw', formats: ['html'] }, /rawHtml/],
      [{ maxAge: -1 }, /maxAge/],
    ];
    for (const [extra, message] of bad) {
      const res = await t.v1('POST', '/webdata/extractions', a.live, { url: `${site.url}/shop`, ...extra });
      expect(res.statusCode, JSON.stringify(extra)).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_ERROR');
      expect(res.json().error.message, JSON.stringify(extra)).toMatch(message);
    }
    // A batch's config is checked the same way.
    const batch = await t.v1('POST', '/webdata/batch/extractions', a.live, {
      urls: [`${site.url}/shop`],
      config: { includeTags: ['div['] },
    });
    expect(batch.statusCode).toBe(400);
    expect(batch.json().error.code).toBe('VALIDATION_ERROR');
  });
});
