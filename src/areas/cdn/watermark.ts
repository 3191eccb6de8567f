import sharp, { type Sharp } from 'sharp';
import type { TransformOptions } from './schema.ts';

// Text and image watermarks, drawn over the finished picture: the mark is sized to a share of the output's
// width (so it looks the same on a thumbnail and on a 2× variant), kept inside the picture, set in from the
// edge by 2 % of the width, and faded to the asked opacity.

export type Mark = { input: Buffer; gravity: string };

const escapeMarkup = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The overlay to composite onto a picture of `width` × `height`, or null when the options ask for none. */
export async function watermarkFor(
  opts: TransformOptions,
  width: number,
  height: number,
  image?: Buffer | string,
): Promise<Mark | null> {
  if (!opts.watermarkText && !image) return null;
  const margin = Math.max(1, Math.round(width * 0.02));
  const boxW = Math.max(1, Math.min(width - 2 * margin, Math.round(width * (opts.watermarkScale ?? 0.25))));
  const boxH = Math.max(1, height - 2 * margin);
  let mark: Sharp;
  if (image) {
    mark = sharp(image, { limitInputPixels: 25_000_000 })
      .rotate()
      .resize({ width: boxW, height: boxH, fit: 'inside' });
  } else {
    // White type on a translucent dark band reads on light and dark pictures alike. Pango fits the text to
    // the box when both sides are given and no dpi is.
    const text = `<span foreground="#ffffff" background="#00000080">${escapeMarkup(opts.watermarkText!)}</span>`;
    mark = sharp({
      text: { text, font: 'sans bold', width: boxW, height: Math.min(boxH, Math.ceil(boxW / 3)), rgba: true },
    });
  }
  const sized = await mark.ensureAlpha().png().toBuffer();
  const opacity = opts.watermarkOpacity ?? 0.7;
  const faded = await sharp(sized)
    .composite([
      {
        input: Buffer.from([255, 255, 255, Math.round(255 * opacity)]),
        raw: { width: 1, height: 1, channels: 4 },
        tile: true,
        blend: 'dest-in',
      },
    ])
    .extend({
      top: margin,
      bottom: margin,
      left: margin,
      right: margin,
      background: { r: 0, g: 0, b: 0, alpha: 0 },
    })
    .png()
    .toBuffer();
  return { input: faded, gravity: opts.watermarkPosition ?? 'southeast' };
}
