import { fileTypeFromBuffer } from 'file-type';
import JSZip from 'jszip';
import mammoth from 'mammoth';
import { extractText, getDocumentProxy, getMeta } from 'unpdf';
import type { Deps } from '../../deps.ts';
import { toMarkdown } from './content.ts';
import { webdataErrors } from './errors.ts';
import { fetchRaw, HttpFailure } from './fetch-page.ts';
import { OCR_MAX_PAGES, pageImages, tesseract } from './pdf-ocr.ts';

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
    return {
      status: 'completed' as const,
      url: res.url,
      type: 'pdf' as const,
      ...(await pdf(res.body, deps.config.webdata.tesseract)),
    };
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

async function pdf(bytes: Buffer, tesseractBinary: string) {
  let doc: Awaited<ReturnType<typeof getDocumentProxy>>;
  let totalPages: number;
  let text: string[];
  try {
    doc = await getDocumentProxy(new Uint8Array(bytes));
    ({ totalPages, text } = await extractText(doc, { mergePages: false }));
  } catch {
    throw webdataErrors.documentUnreadable('PDF');
  }
  const scan = await readScannedPages(doc, text, tesseractBinary);
  try {
    const meta = await getMeta(doc).catch(() => ({ info: {} as Record<string, unknown> }));
    const markdown = scan.text
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
    return {
      markdown,
      pageCount: totalPages,
      metadata: { title },
      scanned: scan.scannedPages.length > 0,
      ocr: scan.ocr,
      warnings: scan.warnings,
    };
  } catch {
    throw webdataErrors.documentUnreadable('PDF');
  }
}

/**
 * Pages with no text layer that paint an image are scans: read with Tesseract when the server has it (at
 * most OCR_MAX_PAGES), else flagged. The text of each such page replaces its empty text.
 */
async function readScannedPages(
  doc: Awaited<ReturnType<typeof getDocumentProxy>>,
  text: string[],
  tesseractBinary: string,
) {
  const out = [...text];
  const scannedPages: number[] = [];
  const images = new Map<number, Buffer[]>();
  for (let i = 0; i < out.length; i++) {
    if (out[i]!.trim()) continue;
    const pngs = await pageImages((await doc.getPage(i + 1)) as never).catch(() => []);
    if (pngs.length === 0) continue;
    scannedPages.push(i + 1);
    images.set(i + 1, pngs);
  }
  const warnings: string[] = [];
  let ocr: { engine: 'tesseract'; language: string; pages: number } | null = null;
  if (scannedPages.length === 0) return { text: out, scannedPages, ocr, warnings };
  const engine = await tesseract(tesseractBinary);
  const list = (pages: number[]) =>
    pages.length > 10 ? `${pages.slice(0, 10).join(', ')}, …` : pages.join(', ');
  if (!engine) {
    warnings.push(
      `Scanned: page(s) ${list(scannedPages)} have no text layer, and OCR is not available on this server (install tesseract-ocr and a language pack).`,
    );
    return { text: out, scannedPages, ocr, warnings };
  }
  const read: number[] = [];
  for (const page of scannedPages.slice(0, OCR_MAX_PAGES)) {
    const parts: string[] = [];
    for (const png of images.get(page) ?? []) {
      const words = await engine.run(png).catch(() => '');
      if (words.trim()) parts.push(words.trim());
    }
    out[page - 1] = parts.join('\n\n');
    read.push(page);
  }
  ocr = { engine: 'tesseract', language: engine.language, pages: read.length };
  const unread = scannedPages.slice(OCR_MAX_PAGES);
  if (unread.length) {
    warnings.push(
      `Scanned: page(s) ${list(unread)} were not read; OCR reads the first ${OCR_MAX_PAGES} scanned pages.`,
    );
  }
  return { text: out, scannedPages, ocr, warnings };
}

// Code in Word files: pandoc writes code blocks as "Source Code" paragraphs (lines split by breaks) and
// inline code as "Verbatim Char" runs; Word users' "HTML Preformatted" and "Code" styles likewise. Mammoth
// drops unknown styles to plain paragraphs, losing the code's lines and the fence around it.
const DOCX_CODE = [
  "p[style-name='Source Code'] => pre:separator('\\n')",
  "p[style-name='HTML Preformatted'] => pre:separator('\\n')",
  "p[style-name='Code'] => pre:separator('\\n')",
  "r[style-name='Verbatim Char'] => code",
  "r[style-name='HTML Code'] => code",
];

async function docx(bytes: Buffer, url: string) {
  let html: string;
  try {
    html = (await mammoth.convertToHtml({ buffer: bytes }, { styleMap: DOCX_CODE })).value;
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
    scanned: false,
    ocr: null,
    warnings: [] as string[],
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
