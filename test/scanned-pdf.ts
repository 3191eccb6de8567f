import sharp from 'sharp';

// A scanned PDF for tests: text rendered to a greyscale JPEG (sharp, DejaVu Sans) and wrapped as the only
// thing on its page — an image XObject with no text layer, as a scanner writes it. About 17 KB.

export async function scannedPdf(lines: string[]): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1000" height="${100 + lines.length * 110}">
<rect width="100%" height="100%" fill="white"/>${lines
    .map((l, i) => `<text x="40" y="${110 + i * 110}" font-family="DejaVu Sans" font-size="56">${l}</text>`)
    .join('')}</svg>`;
  const jpeg = await sharp(Buffer.from(svg)).grayscale().jpeg({ quality: 80 }).toBuffer();
  const { width = 0, height = 0 } = await sharp(jpeg).metadata();
  const pw = 600;
  const ph = Math.round((pw * height) / width);
  const content = `q ${pw} 0 0 ${ph} 0 0 cm /Im0 Do Q`;
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n')];
  const offsets: number[] = [];
  let len = parts[0]!.length;
  const push = (b: Buffer) => {
    parts.push(b);
    len += b.length;
  };
  const objects: (string | null)[] = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${pw} ${ph}] /Resources << /XObject << /Im0 4 0 R >> >> /Contents 5 0 R >>`,
    null,
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
  ];
  objects.forEach((o, i) => {
    offsets.push(len);
    if (o !== null) {
      push(Buffer.from(`${i + 1} 0 obj\n${o}\nendobj\n`));
      return;
    }
    push(
      Buffer.from(
        `${i + 1} 0 obj\n<< /Type /XObject /Subtype /Image /Width ${width} /Height ${height} /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /DCTDecode /Length ${jpeg.length} >>\nstream\n`,
      ),
    );
    push(jpeg);
    push(Buffer.from('\nendstream\nendobj\n'));
  });
  const xref = len;
  const rows = offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('');
  push(
    Buffer.from(
      `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${rows}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`,
    ),
  );
  return Buffer.concat(parts);
}
