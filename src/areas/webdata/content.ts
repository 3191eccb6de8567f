/// <reference path="./turndown-plugin-gfm.d.ts" />
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';
import { gfm } from 'turndown-plugin-gfm';
import type { PageMetadata } from './tables.ts';

// HTML → what an extraction returns: the main content (Readability on a linkedom document: no layout, so
// fast, and it needs no browser) as markdown (turndown with GFM tables, fenced code), the page's metadata,
// and its links and images as absolute URLs. Readability gives up on pages that are mostly lists or tables
// (docs indexes, product grids); then the body minus navigation chrome is converted instead.

type Doc = ReturnType<typeof parseHTML>['document'];

const CHROME =
  'script, style, noscript, template, iframe, nav, footer, aside, form, svg, [role="navigation"]';

// Site chrome goes before Readability sees the page: on short pages it keeps the whole body, menus
// included. A <header> inside the article or main content is the article's own and stays.
function stripChrome(doc: Doc): void {
  for (const el of doc.querySelectorAll(CHROME)) el.remove();
  for (const el of doc.querySelectorAll('header')) if (!el.closest('article, main')) el.remove();
}

function turndown(): TurndownService {
  const td = new TurndownService({
    headingStyle: 'atx',
    codeBlockStyle: 'fenced',
    bulletListMarker: '-',
    emDelimiter: '_',
  });
  td.use(gfm);
  // turndown pads bullets to four columns ("-   item"); one space is what people and other tools write.
  td.addRule('listItem', {
    filter: 'li',
    replacement(content, node, options) {
      const body = content.replace(/^\n+/, '').replace(/\n+$/, '\n').replace(/\n/gm, '\n  ');
      const parent = node.parentNode as HTMLElement | null;
      let prefix = `${options.bulletListMarker} `;
      if (parent?.nodeName === 'OL') {
        const start = Number(parent.getAttribute('start') ?? 1);
        prefix = `${start + Array.prototype.indexOf.call(parent.children, node)}. `;
      }
      return prefix + body + (node.nextSibling && !/\n$/.test(body) ? '\n' : '');
    },
  });
  td.remove(['script', 'style', 'noscript', 'template', 'iframe']);
  return td;
}

const converter = turndown();

export function parseDocument(html: string): Doc {
  return parseHTML(html).document;
}

export function pageMetadata(doc: Doc, baseUrl: string): PageMetadata {
  const meta = (sel: string) => doc.querySelector(sel)?.getAttribute('content')?.trim() || null;
  const title =
    doc.querySelector('title')?.textContent?.trim() ||
    meta('meta[property="og:title"]') ||
    doc.querySelector('h1')?.textContent?.trim() ||
    null;
  const description =
    meta('meta[name="description"]') ||
    meta('meta[property="og:description"]') ||
    meta('meta[name="twitter:description"]');
  const og = meta('meta[property="og:image"]') || meta('meta[name="twitter:image"]');
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

/** Main content as markdown; `full` converts the whole body (minus scripts) instead. */
export function toMarkdown(html: string, baseUrl: string, opts: { full?: boolean } = {}): string {
  const doc = parseDocument(html);
  absolutise(doc, baseUrl);
  if (!opts.full) {
    stripChrome(doc);
    const article = readable(doc);
    if (article) return tidy(converter.turndown(article));
  }
  const body = doc.querySelector('body') ?? doc.documentElement;
  if (!body) return '';
  return tidy(converter.turndown(body.innerHTML ?? ''));
}

// Readability works on a clone (it mutates), and its answer is used only when it kept a fair share of the
// page's text: on list- and table-heavy pages it keeps one paragraph and drops the rest.
function readable(doc: Doc): string | null {
  const bodyText = (doc.querySelector('body')?.textContent ?? '').replace(/\s+/g, ' ').trim();
  if (bodyText.length === 0) return null;
  const clone = doc.cloneNode(true) as Doc;
  let article: { content?: string | null; textContent?: string | null } | null = null;
  try {
    article = new Readability(clone as unknown as Document, { charThreshold: 200 }).parse();
  } catch {
    return null;
  }
  const text = (article?.textContent ?? '').replace(/\s+/g, ' ').trim();
  if (!article?.content || text.length < Math.min(500, bodyText.length * 0.25)) return null;
  if (hasStructure(doc) && text.length < bodyText.length * 0.35) return null;
  return article.content;
}

function hasStructure(doc: Doc): boolean {
  return doc.querySelectorAll('table tr').length >= 4 || doc.querySelectorAll('li').length >= 12;
}

function absolutise(doc: Doc, baseUrl: string): void {
  const base = documentBase(doc, baseUrl);
  for (const a of doc.querySelectorAll('a[href]')) {
    const u = absolute(a.getAttribute('href') ?? '', base);
    if (u) a.setAttribute('href', u);
  }
  for (const img of doc.querySelectorAll('img[src]')) {
    const u = absolute(img.getAttribute('src') ?? '', base);
    if (u) img.setAttribute('src', u);
  }
}

function tidy(md: string): string {
  return md
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Visible text of a page, for heuristics and change detection. */
export function visibleText(doc: Doc): string {
  const body = doc.querySelector('body');
  if (!body) return '';
  const clone = body.cloneNode(true) as typeof body;
  for (const el of clone.querySelectorAll('script, style, noscript, template')) el.remove();
  return (clone.textContent ?? '').replace(/\s+/g, ' ').trim();
}
