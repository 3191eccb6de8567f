import { fileTypeFromBuffer } from 'file-type';
import JSZip from 'jszip';
import mammoth from 'mammoth';
import { extractText, getDocumentProxy, getMeta } from 'unpdf';
import type { Deps } from '../../deps.ts';
import { toMarkdown } from './content.ts';
import { webdataErrors } from './errors.ts';
import { fetchRaw, HttpFailure } from './fetch-page.ts';

// Documents: a PDF (unpdf) or DOCX (mammoth) fetched through the guard and turned into markdown, answered
// in the request. The type comes from the bytes, not the URL or Content-Type. A PDF's text comes page by
// page (PDFs carry no headings or lists, so its markdown is paragraphs); a DOCX keeps headings, lists,
// tables and links (mammoth's HTML through the same turndown as pages). A DOCX has no pages of its own:
// pageCount is what Word recorded in docProps/app.xml, else an estimate of one page per 500 words.

const MAX_DOCUMENT_BYTES = 25 * 1024 * 1024;
const WORDS_PER_PAGE = 500;

export async function parseDocumentAt(deps: Deps, url: string) {
  const res = await fetchRaw(deps, url, {
    accept:
      'application/pdf,application/vnd.openxmlformats-officedocument.wordprocessingml.document,*/*;q=0.5',
    maxBytes: MAX_DOCUMENT_BYTES,
  });
  if (res.status >= 400) throw new HttpFailure(res.status, 'document');
  const type = await fileTypeFromBuffer(res.body).catch(() => undefined);
  if (type?.ext === 'pdf')
    return { status: 'completed' as const, url: res.url, type: 'pdf' as const, ...(await pdf(res.body)) };
  if (type?.ext === 'docx')
    return {
      status: 'completed' as const,
      url: res.url,
      type: 'docx' as const,
      ...(await docx(res.body, res.url)),
    };
  throw webdataErrors.documentUnsupported(
    type?.mime ?? res.headers.get('content-type')?.split(';')[0] ?? 'unknown',
  );
}

async function pdf(bytes: Buffer) {
  try {
    const doc = await getDocumentProxy(new Uint8Array(bytes));
    const { totalPages, text } = await extractText(doc, { mergePages: false });
    const meta = await getMeta(doc).catch(() => ({ info: {} as Record<string, unknown> }));
    const markdown = text
      .map((t) =>
        t
          .replace(/[ \t]+\n/g, '\n')
          .replace(/\n{3,}/g, '\n\n')
          .trim(),
      )
      .filter(Boolean)
      .join('\n\n');
    const title =
      typeof meta.info.Title === 'string' && meta.info.Title.trim() ? meta.info.Title.trim() : null;
    return { markdown, pageCount: totalPages, metadata: { title } };
  } catch {
    throw webdataErrors.documentUnreadable('PDF');
  }
}

async function docx(bytes: Buffer, url: string) {
  let html: string;
  try {
    html = (await mammoth.convertToHtml({ buffer: bytes })).value;
  } catch {
    throw webdataErrors.documentUnreadable('DOCX');
  }
  const markdown = toMarkdown(`<html><body>${html}</body></html>`, url, { full: true });
  const props = await docxProps(bytes);
  const words = markdown.split(/\s+/).filter(Boolean).length;
  return {
    markdown,
    pageCount: props.pages ?? Math.max(1, Math.ceil(words / WORDS_PER_PAGE)),
    metadata: { title: props.title },
  };
}

async function docxProps(bytes: Buffer): Promise<{ pages: number | null; title: string | null }> {
  try {
    const zip = await JSZip.loadAsync(bytes);
    const app = (await zip.file('docProps/app.xml')?.async('string')) ?? '';
    const core = (await zip.file('docProps/core.xml')?.async('string')) ?? '';
    const pages = Number(/<Pages>(\d+)<\/Pages>/.exec(app)?.[1]);
    const title = /<dc:title>([^<]*)<\/dc:title>/.exec(core)?.[1]?.trim() || null;
    return { pages: Number.isInteger(pages) && pages > 0 ? pages : null, title };
  } catch {
    return { pages: null, title: null };
  }
}
