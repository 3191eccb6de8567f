import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { htmlToMarkdown } from './markdown.ts';
import type { PageMetadata } from './tables.ts';

// HTML → what an extraction returns: the main content as markdown (markdown.ts), the page's metadata, and
// its links and images as absolute URLs. The main content is chosen among Readability's article (on a
// linkedom document: no layout, so fast, and no browser), the page's declared main region and its body
// (mainHtml says when each wins); all from one parse (a crawl passes its parsed document).

type Doc = ReturnType<typeof parseHTML>['document'];

const NOT_CONTENT = 'script, style, noscript, template, iframe, svg';
const CHROME = 'nav, footer, aside, form, [role="navigation"]';

// Site chrome goes before Readability sees the page: on short pages it keeps the whole body, menus
// included. A <header> inside the article or main content is the article's own and stays. An element
// holding most of the page's text is not chrome whatever its tag: ASP.NET pages wrap the whole page in
// one <form>, some themes the article in an <aside>.
function stripChrome(doc: Doc): void {
  for (const el of doc.querySelectorAll(NOT_CONTENT)) el.remove();
  const total = squash(doc.querySelector('body')?.textContent ?? '').length;
  const wraps = (el: Element) => squash(el.textContent ?? '').length > total * 0.5;
  for (const el of doc.querySelectorAll(CHROME)) if (!wraps(el as unknown as Element)) el.remove();
  for (const el of doc.querySelectorAll('header'))
    if (!el.closest('article, main') && !wraps(el as unknown as Element)) el.remove();
  // Permalink marks beside headings (Sphinx's ¶, §, #, 🔗): not text, and noise in every heading.
  for (const a of doc.querySelectorAll('a[href*="#"]'))
    if (/^\s*(?:¶|§|#|🔗)\s*$/u.test(a.textContent ?? '')) a.remove();
}

// Blocks that are around the content rather than of it, by their class or id: the names Readability
// itself skips (comments, related links, share bars, sidebars…), unless the name also says content.
// Used on a fallback region, which Readability did not clean. Headings, links and code are kept.
const UNLIKELY =
  /-ad-|banner|breadcrumbs|combx|comment|community|disqus|footer|gdpr|legends|menu|related|remark|replies|rss|shoutbox|sidebar|skyscraper|social|sponsor|share|newsletter|promo|pagination|pager|popup/i;
const MAYBE = /and|article|body|column|content|main|shadow/i;

// The outermost such blocks of a region, skipping any that holds most of its text (a page wrapper whose
// class says "has-sidebar" is the page, not a sidebar).
function asides(el: Element, total: number): Element[] {
  const out: Element[] = [];
  for (const child of el.querySelectorAll('[class], [id]')) {
    if (/^(H[1-6]|A|PRE|CODE|TABLE|TR|TD|TH|BODY)$/.test(child.nodeName)) continue;
    const names = `${child.getAttribute('class') ?? ''} ${child.getAttribute('id') ?? ''}`;
    if (!UNLIKELY.test(names) || MAYBE.test(names)) continue;
    if (out.some((o) => o.contains(child as unknown as Node))) continue;
    if (squash(child.textContent ?? '').length > total * 0.5) continue;
    out.push(child as unknown as Element);
  }
  return out;
}

// A region's HTML and text length without its asides; the document is left as it was (Readability reads
// it next and does its own cleaning).
function withoutAsides(el: Element): { html: string; text: number; asides: number } {
  const total = squash(el.textContent ?? '').length;
  const found = asides(el, total);
  const markers = found.map((a) => {
    const m = (el.ownerDocument as unknown as Doc).createComment('') as unknown as Element;
    a.replaceWith(m);
    return m;
  });
  const html = el.innerHTML ?? '';
  const text = squash(el.textContent ?? '').length;
  for (const [i, m] of markers.entries()) m.replaceWith(found[i]!);
  return { html, text, asides: found.length };
}

export function parseDocument(html: string): Doc {
  return parseHTML(html).document;
}

export function pageMetadata(doc: Doc, baseUrl: string): PageMetadata {
  // One pass over the <meta> tags rather than a selector per field (each walks the whole document).
  const metas = new Map<string, string>();
  for (const m of doc.querySelectorAll('meta')) {
    const key = (m.getAttribute('property') ?? m.getAttribute('name') ?? '').toLowerCase();
    const content = m.getAttribute('content')?.trim();
    if (key && content && !metas.has(key)) metas.set(key, content);
  }
  const meta = (key: string) => metas.get(key) || null;
  const title =
    doc.querySelector('title')?.textContent?.trim() ||
    meta('og:title') ||
    doc.querySelector('h1')?.textContent?.trim() ||
    null;
  const description = meta('description') || meta('og:description') || meta('twitter:description');
  const og = meta('og:image') || meta('twitter:image');
  return { title, description, ogImage: og ? absolute(og, baseUrl) : null };
}

export function absolute(href: string, base: string): string | null {
  try {
    const u = new URL(href, base);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
    u.hash = '';
    return u.toString();
  } catch {
    return null;
  }
}

/** Every distinct http(s) link of the page, absolute, in page order. */
export function pageLinks(doc: Doc, baseUrl: string): string[] {
  const base = documentBase(doc, baseUrl);
  const out = new Set<string>();
  for (const a of doc.querySelectorAll('a[href]')) {
    const rel = (a.getAttribute('rel') ?? '').toLowerCase();
    if (rel.includes('nofollow')) continue;
    const u = absolute(a.getAttribute('href') ?? '', base);
    if (u) out.add(u);
  }
  return [...out];
}

export function pageImages(doc: Doc, baseUrl: string): string[] {
  const base = documentBase(doc, baseUrl);
  const out = new Set<string>();
  for (const img of doc.querySelectorAll('img[src]')) {
    const u = absolute(img.getAttribute('src') ?? '', base);
    if (u) out.add(u);
  }
  return [...out];
}

/** `<link rel=canonical>` when it names an http(s) URL. */
export function canonicalUrl(doc: Doc, baseUrl: string): string | null {
  const href = doc.querySelector('link[rel="canonical"]')?.getAttribute('href');
  return href ? absolute(href, baseUrl) : null;
}

function documentBase(doc: Doc, baseUrl: string): string {
  const href = doc.querySelector('base[href]')?.getAttribute('href');
  return (href && absolute(href, baseUrl)) || baseUrl;
}

/**
 * Main content as markdown; `full` converts the whole body (minus scripts) instead. Given a parsed
 * document, that document is used (and changed: take links and metadata from it first), so a crawl
 * parses each page once.
 */
export function toMarkdown(input: string | Doc, baseUrl: string, opts: { full?: boolean } = {}): string {
  return toContent(input, baseUrl, opts).markdown;
}

/** toMarkdown, with the HTML the markdown was made from (the `html` format of an extraction). */
export function toContent(
  input: string | Doc,
  baseUrl: string,
  opts: { full?: boolean } = {},
): { html: string; markdown: string } {
  const doc = typeof input === 'string' ? parseDocument(input) : input;
  absolutise(doc, baseUrl);
  const body = doc.querySelector('body') ?? doc.documentElement;
  if (!body) return { html: '', markdown: '' };
  if (opts.full) {
    for (const el of body.querySelectorAll(NOT_CONTENT)) el.remove();
    const html = body.innerHTML ?? '';
    return { html, markdown: htmlToMarkdown(html) };
  }
  const h1 = squash(doc.querySelector('h1')?.textContent ?? '').replace(/\s*[¶§🔗]$/u, '');
  stripChrome(doc);
  const html = mainHtml(doc, body, baseUrl);
  const md = htmlToMarkdown(html);
  // Readability drops the heading that repeats the page's title, or makes it an h2; the reader wants it on
  // top as the page's one h1.
  if (!h1) return { html, markdown: md };
  const first = /^(#{1,6}) (.*)\n?/.exec(md);
  if (first && words(first[2]!) === words(h1))
    return { html, markdown: first[1] === '#' ? md : `# ${md.slice(first[1]!.length + 1)}` };
  if (!words(md).includes(words(h1))) return { html, markdown: `# ${h1}\n\n${md}` };
  return { html, markdown: md };
}

// A text's words, lower-cased, with markdown link targets left out: for "is this heading already there".
const words = (s: string) =>
  (
    s
      .replace(/\]\((?:[^()]|\([^)]*\))*\)/g, ']')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  ).join(' ');

const LARGE_REGION = 50_000;
const CLEAN_REGION = 3_000;

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

// The main region a page declares: one <main> or role=main (Sphinx, most documentation and many sites).
function landmark(doc: Doc): Element | null {
  const found = doc.querySelectorAll('main, [role="main"]');
  if (found.length === 0) return null;
  // Nested (a role=main inside <main>) is one region: the outermost.
  const outer = [...found].filter((el) => !el.parentElement?.closest('main, [role="main"]'));
  return outer.length === 1 ? (outer[0] as unknown as Element) : null;
}

// Candidates: Readability's article, the declared main region, the body minus chrome. Readability wins
// unless it kept too little of the page's content: on pages that are lists of links or tables (docs
// indexes, tables of contents, product grids) it keeps one paragraph, or only a footer line. In a declared
// main region links are content (the author put them there); outside one, a body's link lists are mostly
// menus, so there only the text outside links counts against Readability's choice.
function mainHtml(doc: Doc, body: Element, pageUrl: string): string {
  const found = landmark(doc);
  const region = found && squash(found.textContent ?? '').length > 0 ? found : null;
  const cleaned = withoutAsides(region ?? body);
  const fallback = cleaned.html;
  const useRegion = region !== null;
  const measure = useRegion ? cleaned.text : proseLength(body);
  if (squash(body.textContent ?? '').length === 0) return fallback;
  // A declared region with this much text is a reference page (a module's documentation, a long table),
  // not an article among chrome; Readability's scoring of it costs seconds and would drop its tables and
  // link lists. So is a clean one (nothing in it named like comments, related links, share bars…) of a
  // few thousand characters: what the page's author marked as its content is the content, and Readability,
  // about a third of a conversion's time, would only remove things from it.
  if (useRegion && (measure >= LARGE_REGION || (cleaned.asides === 0 && measure >= CLEAN_REGION)))
    return fallback;
  const structured = useRegion && hasStructure(region);
  const regionWords = region ? wordBag(region.textContent ?? '') : null;
  // Readability mutates the document it reads; the fallback was taken as a string before.
  keepTocLinks(doc, pageUrl);
  let article: { content?: string | null; textContent?: string | null } | null = null;
  try {
    article = new Readability(doc as unknown as Document, { charThreshold: 200, keepClasses: true }).parse();
  } catch {
    return fallback;
  }
  const articleText = squash(article?.textContent ?? '');
  const text = articleText.length;
  // Readability may crown a block outside the declared main region (on a short docs page, the footer).
  if (region && !mostlyWithin(articleText, regionWords)) return fallback;
  if (!article?.content || text < 100 || text < measure * (useRegion ? 0.25 : 0.1)) return fallback;
  if (structured && text < measure * 0.35) return fallback;
  return article.content;
}

// A table of contents is a list of links into the page itself; Readability drops such lists as link
// farms. Its links become spans carrying their target, which Readability keeps as text and the markdown
// turns back into links.
function keepTocLinks(doc: Doc, pageUrl: string): void {
  const page = absolute(pageUrl, pageUrl);
  for (const a of doc.querySelectorAll('li a[href*="#"]')) {
    const href = a.getAttribute('href') ?? '';
    if (absolute(href, pageUrl) !== page) continue;
    const span = doc.createElement('span');
    span.setAttribute('data-pier-href', href);
    span.innerHTML = a.innerHTML;
    a.replaceWith(span);
  }
}

const wordBag = (text: string) => {
  const bag = new Map<string, number>();
  for (const w of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) bag.set(w, (bag.get(w) ?? 0) + 1);
  return bag;
};

// Whether most of a text's words are found in a region's words.
function mostlyWithin(text: string, region: Map<string, number> | null): boolean {
  if (!region) return true;
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  if (words.length === 0) return true;
  const left = new Map(region);
  let found = 0;
  for (const w of words) {
    const n = left.get(w) ?? 0;
    if (n > 0) {
      found++;
      left.set(w, n - 1);
    }
  }
  return found >= words.length * 0.5;
}

// Characters of text outside links.
function proseLength(el: Element): number {
  let links = 0;
  for (const a of el.querySelectorAll('a')) links += squash(a.textContent ?? '').length;
  return Math.max(0, squash(el.textContent ?? '').length - links);
}

function hasStructure(el: Element): boolean {
  return el.querySelectorAll('table tr').length >= 4 || el.querySelectorAll('li').length >= 12;
}

// Links are made absolute with their #fragment kept: a table of contents points into its own page.
function absolutise(doc: Doc, baseUrl: string): void {
  const base = documentBase(doc, baseUrl);
  for (const a of doc.querySelectorAll('a[href]')) {
    const href = a.getAttribute('href') ?? '';
    const u = absolute(href, base);
    if (!u) continue;
    const hash = href.indexOf('#');
    a.setAttribute('href', hash >= 0 ? u + href.slice(hash) : u);
  }
  for (const img of doc.querySelectorAll('img[src]')) {
    const u = absolute(img.getAttribute('src') ?? '', base);
    if (u) img.setAttribute('src', u);
  }
}

export type PageDigest = {
  title: string | null;
  canonical: string | null;
  links: string[];
  markdown: string | null;
  /** The HTML the markdown was made from, when asked (a crawl's `html` format). */
  html?: string | null;
  /** Image URLs, absolute, when asked (a crawl's `images` format). */
  images?: string[] | null;
};

/** What a crawl asks of each page beyond title, canonical URL and links. */
export type DigestWants = { markdown: boolean; html?: boolean; images?: boolean };

/**
 * What a crawl keeps of a page, from one parse (run in a conversion thread, convert-pool.ts): title,
 * canonical URL, links and images read from the whole page first, then the content (which changes the
 * document) by `contentOf` — the main content unless the crawl's scrapeOptions say otherwise.
 */
export function digestPage(
  html: string,
  url: string,
  want: DigestWants,
  contentOf: (doc: Doc) => { html: string; markdown: string } = (doc) => toContent(doc, url),
): PageDigest {
  const doc = parseDocument(html);
  const title = pageMetadata(doc, url).title;
  const canonical = canonicalUrl(doc, url);
  const links = pageLinks(doc, url);
  const images = want.images ? pageImages(doc, url) : null;
  if (!want.markdown && !want.html) return { title, canonical, links, markdown: null, html: null, images };
  const content = contentOf(doc);
  return {
    title,
    canonical,
    links,
    markdown: want.markdown ? content.markdown : null,
    html: want.html ? content.html : null,
    images,
  };
}

/** Visible text of a page, for heuristics and change detection. */
export function visibleText(doc: Doc): string {
  const body = doc.querySelector('body');
  if (!body) return '';
  const clone = body.cloneNode(true) as typeof body;
  for (const el of clone.querySelectorAll('script, style, noscript, template')) el.remove();
  return (clone.textContent ?? '').replace(/\s+/g, ' ').trim();
}
