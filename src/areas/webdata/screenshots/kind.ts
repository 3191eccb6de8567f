import { eq } from 'drizzle-orm';
import type { Environment } from '../../../core/auth/caller.ts';
import { errors } from '../../../core/errors.ts';
import type { Deps } from '../../../deps.ts';
import { readAssetBytes } from '../../cdn/index.ts';
import type { KindRunner, KindScope } from '../plugins.ts';
import { compareScreenshots, type Region } from './change.ts';
import { createBody } from './schema.ts';
import { insertScreenshot, runScreenshot } from './screenshots.ts';
import { webdataScreenshots } from './tables.ts';

// The screenshot kind of batch jobs and schedules. Each URL becomes an ordinary screenshot (listed and read
// like one made through POST /screenshots), rendered inside the batch's or schedule's own job rather than
// queued again, so the batch's progress and a schedule's run follow the capture itself. What change
// detection compares is the image: `content` is the CDN asset of the picture, and the next run reads both
// images back and compares pixels (change.ts).

/** The config of a screenshot batch or schedule, checked as a create body would be (a 400 on a bad one). */
export function checkScreenshotConfig(config: Record<string, unknown>): Record<string, unknown> {
  if ('url' in config) throw errors.validation('config: url is given per URL, not in the config');
  const parsed = createBody.safeParse({ ...config, url: 'https://example.com/' });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw errors.validation(`config.${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
  }
  const { url: _url, ...options } = parsed.data;
  return options;
}

export const runScreenshotKind: KindRunner = async (deps, scope, url, config, ctx) => {
  const body = createBody.parse({ ...config, url });
  const row = await insertScreenshot(deps, scopeOf(scope), body);
  await runScreenshot(deps, row.id, ctx.signal);
  const [done] = await deps.db.orm.select().from(webdataScreenshots).where(eq(webdataScreenshots.id, row.id));
  return {
    resultId: row.id,
    ok: done?.status === 'completed',
    error: done?.status === 'completed' ? null : (done?.error ?? 'The screenshot was deleted while it ran.'),
    content: done?.assetId ?? null,
  };
};

export type PixelChange = { score: number; diff: string | null };

/**
 * The change between two scheduled screenshots (their CDN assets): the changed share of pixels, and as
 * `diff` a JSON summary with the changed regions. An image that can no longer be read (deleted, or a PDF)
 * gives null: no comparison, rather than a made-up score.
 */
export async function compareScreenshotAssets(
  deps: Deps,
  scope: KindScope,
  beforeAssetId: string,
  afterAssetId: string,
): Promise<PixelChange | null> {
  try {
    const [before, after] = await Promise.all([
      readAssetBytes(deps, scopeOf(scope), beforeAssetId),
      readAssetBytes(deps, scopeOf(scope), afterAssetId),
    ]);
    const c = await compareScreenshots(before, after);
    const regions: Region[] = c.regions;
    return {
      score: Math.round(c.changeScore * 10_000) / 10_000,
      diff: c.changedPixels
        ? JSON.stringify({ changedPixels: c.changedPixels, width: c.width, height: c.height, regions })
        : null,
    };
  } catch (err) {
    deps.log.warn({ err }, 'scheduled screenshots could not be compared');
    return null;
  }
}

const scopeOf = (s: KindScope) => ({ orgId: s.orgId, environment: s.environment as Environment });
