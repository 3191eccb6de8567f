import { execFile } from 'node:child_process';
import sharp from 'sharp';

// Scanned PDFs: pages whose text layer is empty but which paint an image are read with Tesseract
// (Debian's `tesseract-ocr` + a language pack such as `tesseract-ocr-eng`), when the server has it. The
// page's images are taken from pdf.js's own decoding (no renderer or canvas needed: a scan is one image
// per page), turned into PNG by sharp and piped to `tesseract stdin stdout`. Without Tesseract the pages
// are only flagged, so the caller knows the empty text is not the document's.

/** pdf.js operator: paint an image XObject (args: object id, width, height). */
const PAINT_IMAGE = 85;
/** pdf.js image kinds: 1 bit per pixel (1 = white), RGB, RGBA. */
const KIND_1BPP = 1;
export const OCR_MAX_PAGES = 20;
const OCR_PAGE_TIMEOUT_MS = 60_000;

type PdfImage = { width: number; height: number; kind: number; data: Uint8Array | Uint8ClampedArray };
type PdfPage = {
  getOperatorList(): Promise<{ fnArray: number[]; argsArray: unknown[][] }>;
  objs: { get(id: string, cb: (img: PdfImage) => void): void };
};

export type Ocr = { run(png: Buffer): Promise<string>; language: string };

const probed = new Map<string, Promise<Ocr | null>>();

/** Tesseract at `binary` with English (else its first language), or null when it is not installed. */
export function tesseract(binary: string): Promise<Ocr | null> {
  if (!binary) return Promise.resolve(null);
  const known = probed.get(binary);
  if (known) return known;
  const found = new Promise<Ocr | null>((resolve) => {
    execFile(binary, ['--list-langs'], { timeout: 10_000 }, (err, stdout, stderr) => {
      if (err) return resolve(null);
      const langs = `${stdout}\n${stderr}`
        .split('\n')
        .slice(1)
        .map((l) => l.trim())
        .filter((l) => /^[a-z_]{3,}$/i.test(l) && l !== 'osd');
      const language = langs.includes('eng') ? 'eng' : langs[0];
      if (!language) return resolve(null);
      resolve({
        language,
        run: (png) =>
          new Promise((ok, fail) => {
            const child = execFile(
              binary,
              ['stdin', 'stdout', '-l', language, '--dpi', '300'],
              { timeout: OCR_PAGE_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024, encoding: 'buffer' },
              (e, out) => (e ? fail(e) : ok(out.toString('utf8'))),
            );
            child.stdin?.end(png);
          }),
      });
    });
  });
  probed.set(binary, found);
  return found;
}

/** The page's images as PNGs, largest first (a scan's page image; logos and marks after it). */
export async function pageImages(page: PdfPage): Promise<Buffer[]> {
  const ops = await page.getOperatorList();
  const images: PdfImage[] = [];
  for (let i = 0; i < ops.fnArray.length; i++) {
    if (ops.fnArray[i] !== PAINT_IMAGE) continue;
    const id = ops.argsArray[i]?.[0];
    if (typeof id !== 'string') continue;
    const img = await new Promise<PdfImage | null>((ok) => {
      try {
        page.objs.get(id, ok);
      } catch {
        ok(null);
      }
    });
    if (img?.data && img.width > 0 && img.height > 0) images.push(img);
  }
  images.sort((a, b) => b.width * b.height - a.width * a.height);
  return Promise.all(images.map(toPng));
}

async function toPng(img: PdfImage): Promise<Buffer> {
  const { width, height } = img;
  let pixels: Buffer;
  let channels: 1 | 3 | 4;
  if (img.kind === KIND_1BPP) {
    const stride = (width + 7) >> 3;
    pixels = Buffer.alloc(width * height);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const bit = (img.data[y * stride + (x >> 3)]! >> (7 - (x & 7))) & 1;
        pixels[y * width + x] = bit ? 255 : 0;
      }
    }
    channels = 1;
  } else {
    pixels = Buffer.from(img.data.buffer, img.data.byteOffset, img.data.byteLength);
    channels = pixels.length / (width * height) === 4 ? 4 : 3;
  }
  return sharp(pixels, { raw: { width, height, channels } }).png().toBuffer();
}
