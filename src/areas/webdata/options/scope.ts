import { type DigestWants, digestPage, type PageDigest, type parseDocument, toContent } from '../content.ts';

// Which part of a page is its content, as the caller chose: `excludeTags` elements are removed first;
// `includeTags` makes the content exactly the elements they match (outermost, page order), with no
// main-content choice on top (the caller said what the content is); otherwise `onlyMainContent` (default
// true) picks the main content (content.ts), and false keeps the whole body, navigation and footer too.

type Doc = ReturnType<typeof parseDocument>;

export type ScopeOptions = { onlyMainContent?: boolean; includeTags?: string[]; excludeTags?: string[] };

export function scopedContent(
  doc: Doc,
  baseUrl: string,
  o: ScopeOptions,
): { html: string; markdown: string } {
  for (const selector of o.excludeTags ?? []) for (const el of doc.querySelectorAll(selector)) el.remove();
  if (o.includeTags?.length) {
    const picked = [...doc.querySelectorAll(o.includeTags.join(', '))];
    const outer = picked.filter((el) => !picked.some((p) => p !== el && p.contains(el)));
    const body = doc.querySelector('body');
    if (body) body.innerHTML = outer.map((el) => el.outerHTML).join('\n');
    return toContent(doc, baseUrl, { full: true });
  }
  return toContent(doc, baseUrl, { full: o.onlyMainContent === false });
}

const isDefault = (o?: ScopeOptions) =>
  !o || (!o.includeTags?.length && !o.excludeTags?.length && o.onlyMainContent !== false);

/**
 * A crawl's page digest with the crawl's scrapeOptions: title, canonical and links read from the whole
 * page (the crawl follows every link whatever the content is), the markdown from the chosen part.
 */
export function digestScoped(html: string, url: string, want: DigestWants, o?: ScopeOptions): PageDigest {
  if (isDefault(o)) return digestPage(html, url, want);
  return digestPage(html, url, want, (doc) => scopedContent(doc, url, o!));
}
