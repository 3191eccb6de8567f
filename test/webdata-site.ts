import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import JSZip from 'jszip';

// A small web site on 127.0.0.1 for web data tests and the bench: articles linked in a chain (depth),
// docs with tables and code, a product page with JSON-LD, robots.txt with a disallowed path (and an
// optional Crawl-delay), a sitemap index with a gzip child, a JavaScript-rendered page, a PDF, a DOCX, a
// redirect loop, a slow page, a 404 and binary garbage. It counts requests per path and the most requests
// it served at once, so tests can check politeness without timing.

export type SiteOptions = { articles?: number; crawlDelay?: number; sitemap?: boolean; latencyMs?: number };

export type Site = {
  url: string;
  port: number;
  hits: Map<string, number>;
  maxInFlight: () => number;
  reset(): void;
  /** Replaces a page's body (schedules' change detection). */
  setPage(path: string, html: string): void;
  close(): Promise<void>;
};

const page = (title: string, body: string, head = '') =>
  `<!doctype html><html><head><title>${title}</title><meta name="description" content="About ${title}">${head}</head>` +
  `<body><nav><a href="/">Home</a> <a href="/docs">Docs</a> <a href="/private/secret">Members</a></nav>` +
  `<main>${body}</main><footer><p>© Example site. <a href="/about">About</a></p></footer></body></html>`;

function article(n: number, total: number): string {
  const next = n < total ? `<p>Read on: <a href="/articles/${n + 1}">article ${n + 1}</a>.</p>` : '';
  return page(
    `Article ${n}`,
    `<article><h1>Article ${n} heading</h1>
<p>This is the body of article number ${n}. It talks at some length about gardening, the weather and the
tools one needs for a small vegetable patch, so that a reader has enough text to judge it by.</p>
<p>A second paragraph of article ${n} adds more sentences about soil, compost and the right time to sow
beans in spring, with a <a href="/articles/${n}#comments">link to its comments</a>.</p>
<h2>Checklist ${n}</h2><ul><li>Spade</li><li>Rake</li><li>Seeds for week ${n}</li></ul>
<pre><code>plant --row ${n} --depth 2cm</code></pre>
${next}</article>`,
    `<meta property="og:image" content="/img/article-${n}.png"><link rel="canonical" href="/articles/${n}">`,
  );
}

const docs = page(
  'Docs',
  `<h1>Documentation</h1><p>Reference tables for the <strong>garden API</strong>.</p>
<table><thead><tr><th>Name</th><th>Type</th><th>Default</th></tr></thead>
<tbody><tr><td>depth</td><td>number</td><td>2</td></tr><tr><td>row</td><td>number</td><td>1</td></tr>
<tr><td>crop</td><td>string</td><td>beans</td></tr></tbody></table>
<p>Download the <a href="/files/guide.pdf">PDF guide</a> or the <a href="/files/notes.docx">notes</a>.</p>
<p><img src="/img/diagram.png" alt="diagram"></p>`,
);

const product = page(
  'Oak Chair',
  `<h1>Oak Chair</h1><p class="price">Price: 149.00 EUR</p><p>A sturdy chair made of solid oak.</p>`,
  `<script type="application/ld+json">${JSON.stringify({
    '@context': 'https://schema.org',
    '@type': 'Product',
    name: 'Oak Chair',
    description: 'A sturdy chair made of solid oak.',
    offers: { '@type': 'Offer', price: '149.00', priceCurrency: 'EUR' },
  })}</script>`,
);

// Product cards for selector fields, with an ad block and an aside for includeTags/excludeTags.
const shop = page(
  'Shop',
  `<h1>Shop</h1><p class="intro">Hand-made furniture from the garden workshop, sold to order.</p>
${[
  ['Oak chair', '149,00 €', 'oak-chair'],
  ['Pine table', '1.249,50 €', 'pine-table'],
  ['Ash stool', '59 €', 'ash-stool'],
]
  .map(
    ([name, price, slug]) =>
      `<div class="product"><h2>${name}</h2><span class="price">${price}</span>` +
      `<a class="more" href="/products/${slug}">Details</a><img src="/img/${slug}.png" alt="${name}"></div>`,
  )
  .join('\n')}
<div class="ad">Advertisement: buy a lawnmower today</div>`,
);

// Content that exists only after a click (actions): the button fills #more and turns the page red, and
// what is typed into #q is echoed.
const reveal = page(
  'Reveal',
  `<h1>Reveal</h1><p>This page hides its best part until the button is pressed.</p>
<button id="show">Show more</button><div id="more"></div><input id="q"><p id="echo"></p>
<script>
document.getElementById('show').addEventListener('click', () => {
  document.getElementById('more').innerHTML = '<p>The hidden part appears only after the click.</p>';
  document.body.style.background = 'rgb(220, 20, 20)';
});
document.getElementById('q').addEventListener('input', (e) => {
  document.getElementById('echo').textContent = 'You typed: ' + e.target.value;
});
</script>`,
);

const jsPage =
  '<!doctype html><html><head><title>App</title></head><body><div id="root"></div>' +
  '<noscript>You need to enable JavaScript to run this app.</noscript>' +
  '<script>document.getElementById("root").textContent = "Rendered by script";</script></body></html>';

/** A two-page PDF with one line of text on each page, built by hand (offsets computed). */
export function tinyPdf(lines: string[] = ['Hello from page one', 'And page two']): Buffer {
  const objs: string[] = [];
  const kids = lines.map((_, i) => `${4 + i * 2} 0 R`).join(' ');
  objs.push('<< /Type /Catalog /Pages 2 0 R >>');
  objs.push(`<< /Type /Pages /Kids [${kids}] /Count ${lines.length} >>`);
  objs.push('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  lines.forEach((line, i) => {
    const content = `BT /F1 18 Tf 72 720 Td (${line}) Tj ET`;
    objs.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + i * 2} 0 R >>`,
    );
    objs.push(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
  });
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objs.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objs.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** A DOCX with a heading, a paragraph, a list-like paragraph and Word's page count (3) in app.xml. */
export async function tinyDocx(): Promise<Buffer> {
  const zip = new JSZip();
  const w = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
  zip.file(
    '[Content_Types].xml',
    '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
      '<Default Extension="xml" ContentType="application/xml"/>' +
      '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>' +
      '<Override PartName="/docProps/app.xml" ContentType="application/vnd.openxmlformats-officedocument.extended-properties+xml"/>' +
      '<Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>' +
      '</Types>',
  );
  // The styles pandoc gives code: a "Source Code" paragraph whose lines are split by breaks, "Verbatim Char" runs.
  zip.file(
    'word/_rels/document.xml.rels',
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      '<Relationship Id="rId9" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>' +
      '</Relationships>',
  );
  zip.file(
    'word/styles.xml',
    `<?xml version="1.0" encoding="UTF-8"?><w:styles xmlns:w="${w}">` +
      '<w:style w:type="paragraph" w:styleId="SourceCode"><w:name w:val="Source Code"/></w:style>' +
      '<w:style w:type="character" w:styleId="VerbatimChar"><w:name w:val="Verbatim Char"/></w:style></w:styles>',
  );
  const code = (text: string) =>
    `<w:r><w:rPr><w:rStyle w:val="VerbatimChar"/></w:rPr><w:t xml:space="preserve">${text}</w:t></w:r>`;
  zip.file(
    '_rels/.rels',
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>' +
      '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties" Target="docProps/app.xml"/>' +
      '</Relationships>',
  );
  zip.file(
    'word/document.xml',
    `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="${w}"><w:body>` +
      '<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Meeting notes</w:t></w:r></w:p>' +
      '<w:p><w:r><w:t>We agreed to plant beans in April.</w:t></w:r></w:p>' +
      '<w:p><w:r><w:rPr><w:b/></w:rPr><w:t>Owner:</w:t></w:r><w:r><w:t xml:space="preserve"> Alice</w:t></w:r></w:p>' +
      `<w:p><w:r><w:t xml:space="preserve">Water with </w:t></w:r>${code('water(beans)')}</w:p>` +
      `<w:p><w:pPr><w:pStyle w:val="SourceCode"/></w:pPr>${code('def water(bed):')}<w:r><w:br/></w:r>${code('    return bed * 2')}</w:p>` +
      '</w:body></w:document>',
  );
  zip.file(
    'docProps/app.xml',
    '<?xml version="1.0" encoding="UTF-8"?><Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties"><Pages>3</Pages></Properties>',
  );
  return zip.generateAsync({ type: 'nodebuffer' });
}

export async function startSite(opts: SiteOptions = {}): Promise<Site> {
  const total = opts.articles ?? 12;
  const pdf = tinyPdf();
  const docx = await tinyDocx();
  const garbage = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256));
  const overrides = new Map<string, string>();
  const hits = new Map<string, number>();
  let inFlight = 0;
  let maxInFlight = 0;
  let base = '';

  const robots = () =>
    `User-agent: *\nDisallow: /private\n${opts.crawlDelay ? `Crawl-delay: ${opts.crawlDelay}\n` : ''}` +
    (opts.sitemap === false ? '' : `Sitemap: ${base}/sitemap-index.xml\n`);
  const urlset = (paths: string[]) =>
    `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${paths
      .map((p) => `<url><loc>${base}${p}</loc></url>`)
      .join('')}</urlset>`;

  const home = () =>
    page(
      'Home',
      `<h1>Welcome</h1><p>A garden site.</p><img src="/img/garden.png" alt="Garden"><ul>
<li><a href="/articles/1">First article</a></li><li><a href="/docs">Docs</a></li>
<li><a href="/products/oak-chair">Oak chair</a></li><li><a href="/articles/1?#top">First again</a></li>
<li><a href="/copy-of-first">A copy of the first article</a></li><li><a href="/missing">Gone</a></li>
<li><a href="mailto:hi@example.com">Mail</a></li><li><a href="https://elsewhere.example/">Elsewhere</a></li></ul>`,
    );

  type Handler = (res: http.ServerResponse) => void | Promise<void>;
  const html =
    (body: string, status = 200): Handler =>
    (res) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
      res.end(body);
    };
  const routes = (path: string): Handler | undefined => {
    if (overrides.has(path)) return html(overrides.get(path)!);
    if (path === '/') return html(home());
    const m = /^\/articles\/(\d+)$/.exec(path);
    if (m && Number(m[1]) >= 1 && Number(m[1]) <= total) return html(article(Number(m[1]), total));
    switch (path) {
      case '/copy-of-first':
        return html(article(1, total));
      case '/docs':
        return html(docs);
      case '/about':
        return html(page('About', '<h1>About</h1><p>Who we are.</p>'));
      case '/products/oak-chair':
        return html(product);
      case '/private/secret':
        return html(page('Secret', '<p>Members only.</p>'));
      case '/app':
        return html(jsPage);
      case '/shop':
        return html(shop);
      case '/reveal':
        return html(reveal);
      case '/tall':
        return html(page('Tall', '<h1>Tall</h1><div style="height:20000px">A very long page.</div>'));
      case '/robots.txt':
        return (res) => {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end(robots());
        };
      case '/sitemap-index.xml':
        return (res) => {
          res.writeHead(200, { 'content-type': 'application/xml' });
          res.end(
            `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${base}/sitemap-pages.xml</loc></sitemap><sitemap><loc>${base}/sitemap-articles.xml.gz</loc></sitemap></sitemapindex>`,
          );
        };
      case '/sitemap-pages.xml':
        return (res) => {
          res.writeHead(200, { 'content-type': 'application/xml' });
          res.end(urlset(['/', '/docs', '/products/oak-chair']));
        };
      case '/sitemap-articles.xml.gz':
        return (res) => {
          res.writeHead(200, { 'content-type': 'application/gzip' });
          res.end(zlib.gzipSync(urlset(Array.from({ length: total }, (_, i) => `/articles/${i + 1}`))));
        };
      case '/files/guide.pdf':
        return (res) => {
          res.writeHead(200, { 'content-type': 'application/pdf' });
          res.end(pdf);
        };
      case '/files/notes.docx':
        return (res) => {
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          res.end(docx);
        };
      case '/garbage':
        return (res) => {
          res.writeHead(200);
          res.end(garbage);
        };
      case '/garbage.html':
        return (res) => {
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end(garbage);
        };
      case '/loop':
        return (res) => {
          res.writeHead(302, { location: '/loop' });
          res.end();
        };
      case '/slow':
        return () => undefined; // never answers; the fetch's time limit ends it
      default:
        return undefined;
    }
  };

  const server = http.createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on('close', () => inFlight--);
    if (opts.latencyMs) await new Promise((r) => setTimeout(r, opts.latencyMs));
    const to = path === '/redirect' ? new URL(req.url ?? '/', 'http://x').searchParams.get('to') : null;
    if (to) {
      res.writeHead(302, { location: to });
      res.end();
      return;
    }
    const handler = routes(path);
    if (handler) await handler(res);
    else html(page('Not found', '<h1>Not found</h1>'), 404)(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  return {
    url: base,
    port,
    hits,
    maxInFlight: () => maxInFlight,
    reset: () => {
      hits.clear();
      maxInFlight = inFlight;
    },
    setPage: (path, body) => overrides.set(path, body),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
