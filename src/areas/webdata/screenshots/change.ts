import pixelmatch from 'pixelmatch';
import sharp from 'sharp';

// Change detection for scheduled screenshots: how much of the picture differs from the previous run, and
// where. pixelmatch compares in a perceptual colour space and ignores anti-aliasing, so font smoothing
// noise does not count as change. Images of different sizes are compared on the larger canvas, where the
// area only one of them covers counts as changed. The score is the changed share of pixels (0–1), which a
// schedule compares with its `changeThreshold`.

export type Region = { x: number; y: number; width: number; height: number };

export type ScreenshotChange = {
  /** Changed pixels / all pixels of the canvas, 0 (identical) to 1. */
  changeScore: number;
  changedPixels: number;
  width: number;
  height: number;
  /** Bounding boxes of the changed areas (neighbouring changed 32 px cells merged), largest first. */
  regions: Region[];
  /** The diff as a PNG: changes in red over a faded copy of the newer image. */
  diffPng: Buffer;
};

const CELL = 32;
const MAX_REGIONS = 50;

export async function compareScreenshots(
  before: Buffer,
  after: Buffer,
  o: { threshold?: number } = {},
): Promise<ScreenshotChange> {
  const [a, b] = await Promise.all([sharp(before).metadata(), sharp(after).metadata()]);
  const width = Math.max(a.width ?? 0, b.width ?? 0);
  const height = Math.max(a.height ?? 0, b.height ?? 0);
  // Distinct fills, so a pixel only one image covers can never match.
  const [pa, pb] = await Promise.all([
    rgba(before, width, height, { r: 255, g: 0, b: 255, alpha: 1 }),
    rgba(after, width, height, { r: 0, g: 255, b: 0, alpha: 1 }),
  ]);
  const diff = Buffer.alloc(width * height * 4);
  const changedPixels = pixelmatch(pa, pb, diff, width, height, { threshold: o.threshold ?? 0.1 });
  const diffPng = await sharp(diff, { raw: { width, height, channels: 4 } })
    .png()
    .toBuffer();
  return {
    changeScore: width * height ? changedPixels / (width * height) : 0,
    changedPixels,
    width,
    height,
    regions: changedPixels ? regionsOf(diff, width, height) : [],
    diffPng,
  };
}

async function rgba(
  img: Buffer,
  width: number,
  height: number,
  background: { r: number; g: number; b: number; alpha: number },
): Promise<Buffer> {
  const m = await sharp(img).metadata();
  return sharp(img)
    .ensureAlpha()
    .extend({ right: width - (m.width ?? 0), bottom: height - (m.height ?? 0), background })
    .raw()
    .toBuffer();
}

/** Changed cells of a coarse grid, merged into connected regions. pixelmatch paints changes pure red. */
function regionsOf(diff: Buffer, width: number, height: number): Region[] {
  const cols = Math.ceil(width / CELL);
  const rows = Math.ceil(height / CELL);
  const hot = new Uint8Array(cols * rows);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      if (diff[i] === 255 && diff[i + 1] === 0 && diff[i + 2] === 0)
        hot[Math.floor(y / CELL) * cols + Math.floor(x / CELL)] = 1;
    }
  }
  const regions: Region[] = [];
  const seen = new Uint8Array(cols * rows);
  for (let start = 0; start < hot.length; start++) {
    if (!hot[start] || seen[start]) continue;
    let [x0, y0, x1, y1] = [cols, rows, 0, 0];
    const stack = [start];
    seen[start] = 1;
    while (stack.length) {
      const c = stack.pop()!;
      const cx = c % cols;
      const cy = Math.floor(c / cols);
      [x0, y0, x1, y1] = [Math.min(x0, cx), Math.min(y0, cy), Math.max(x1, cx), Math.max(y1, cy)];
      for (const [dx, dy] of [
        [1, 0],
        [-1, 0],
        [0, 1],
        [0, -1],
      ] as const) {
        const nx = cx + dx;
        const ny = cy + dy;
        const n = ny * cols + nx;
        if (nx >= 0 && ny >= 0 && nx < cols && ny < rows && hot[n] && !seen[n]) {
          seen[n] = 1;
          stack.push(n);
        }
      }
    }
    const x = x0 * CELL;
    const y = y0 * CELL;
    regions.push({
      x,
      y,
      width: Math.min(width, (x1 + 1) * CELL) - x,
      height: Math.min(height, (y1 + 1) * CELL) - y,
    });
  }
  return regions.sort((p, q) => q.width * q.height - p.width * p.height).slice(0, MAX_REGIONS);
}
