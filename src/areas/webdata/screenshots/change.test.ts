import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { compareScreenshots } from './change.ts';

// Change detection between two screenshots: identical pictures score 0, a changed block is found where it
// is and scores its share of the picture, a size change counts the uncovered area.

const canvas = (
  w: number,
  h: number,
  blocks: { x: number; y: number; w: number; h: number; c: string }[] = [],
) =>
  sharp({ create: { width: w, height: h, channels: 3, background: '#ffffff' } })
    .composite(
      blocks.map((b) => ({
        input: { create: { width: b.w, height: b.h, channels: 3 as const, background: b.c } },
        left: b.x,
        top: b.y,
      })),
    )
    .png()
    .toBuffer();

describe('compareScreenshots', () => {
  it('identical images do not change', async () => {
    const a = await canvas(200, 100, [{ x: 10, y: 10, w: 50, h: 20, c: '#336699' }]);
    const out = await compareScreenshots(a, a);
    expect(out.changeScore).toBe(0);
    expect(out.regions).toEqual([]);
  });

  it('a changed block scores its share and is located', async () => {
    const a = await canvas(200, 100);
    const b = await canvas(200, 100, [{ x: 100, y: 40, w: 40, h: 20, c: '#000000' }]);
    const out = await compareScreenshots(a, b);
    expect(out.changedPixels).toBe(40 * 20);
    expect(out.changeScore).toBeCloseTo(800 / 20_000, 5);
    expect(out.regions).toHaveLength(1);
    const r = out.regions[0]!;
    expect(r.x).toBeLessThanOrEqual(100);
    expect(r.x + r.width).toBeGreaterThanOrEqual(140);
    expect(r.y).toBeLessThanOrEqual(40);
    expect(r.y + r.height).toBeGreaterThanOrEqual(60);
    expect((await sharp(out.diffPng).metadata()).width).toBe(200);
  });

  it('a taller page counts the new area as changed', async () => {
    const a = await canvas(100, 100);
    const b = await canvas(100, 150);
    const out = await compareScreenshots(a, b);
    expect([out.width, out.height]).toEqual([100, 150]);
    expect(out.changedPixels).toBe(100 * 50);
  });
});
