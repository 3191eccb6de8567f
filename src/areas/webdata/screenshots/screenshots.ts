import { and, desc, eq, lt, or, type SQL } from 'drizzle-orm';
import type { Environment } from '../../../core/auth/caller.ts';
import { sharedBrowserPool } from '../../../core/browser/shared.ts';
import { ApiError, errors } from '../../../core/errors.ts';
import { isUuid } from '../../../core/ids.ts';
import { cursorPage, decodeCursor, keysetSchema } from '../../../core/pagination.ts';
import type { Deps } from '../../../deps.ts';
import { deleteAssets, storeAsset } from '../../cdn/index.ts';
import { webdataErrors } from '../errors.ts';
import { capture } from './capture.ts';
import type { CreateBody, ListQuery, ScreenshotOptions, ScreenshotOut } from './schema.ts';
import { type ScreenshotRow, webdataScreenshots as shots } from './tables.ts';

// Screenshots: create stores a pending row and queues `webdata.screenshot` (jobs.ts), which renders the page
// in the shared Chromium pool and stores the image as a CDN asset. Reads are tenant-scoped: another
// organization's screenshot (or the other environment's) is a 404.

export const SCREENSHOT_JOB = 'webdata.screenshot';
export type Scope = { orgId: string; environment: Environment };

const tenant = (s: Scope) => and(eq(shots.orgId, s.orgId), eq(shots.environment, s.environment));
const listScope = (s: Scope) => `webdata.screenshots:${s.orgId}:${s.environment}`;

export async function createScreenshot(deps: Deps, s: Scope, body: CreateBody): Promise<ScreenshotOut> {
  const row = await insertScreenshot(deps, s, body);
  await deps.jobs.enqueue(SCREENSHOT_JOB, { screenshotId: row.id });
  return toOut(row);
}

/** The pending row alone: batches and schedules render it in their own job (kind.ts). */
export async function insertScreenshot(deps: Deps, s: Scope, body: CreateBody): Promise<ScreenshotRow> {
  const { url, ...options } = body;
  const now = deps.clock.now();
  const [row] = await deps.db.orm
    .insert(shots)
    .values({
      orgId: s.orgId,
      environment: s.environment,
      url,
      status: 'pending',
      format: options.format,
      fullPage: options.fullPage,
      deviceType: options.deviceType,
      options: options as unknown as Record<string, unknown>,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  return row!;
}

export async function getScreenshot(deps: Deps, s: Scope, id: string): Promise<ScreenshotOut> {
  return toOut(await find(deps, s, id));
}

export async function listScreenshots(deps: Deps, s: Scope, q: ListQuery) {
  const where: SQL[] = [tenant(s)!];
  if (q.status) where.push(eq(shots.status, q.status));
  if (q.url) where.push(eq(shots.url, q.url));
  if (q.cursor) {
    const at = decodeCursor(deps.keyring, listScope(s), q.cursor, keysetSchema);
    const when = new Date(at.at);
    if (Number.isNaN(when.getTime()) || !isUuid(at.id)) throw errors.invalidCursor();
    where.push(or(lt(shots.createdAt, when), and(eq(shots.createdAt, when), lt(shots.id, at.id)))!);
  }
  const rows = await deps.db.orm
    .select()
    .from(shots)
    .where(and(...where))
    .orderBy(desc(shots.createdAt), desc(shots.id))
    .limit(q.limit + 1);
  const page = cursorPage(deps.keyring, listScope(s), rows, q.limit, (r) => ({
    at: r.createdAt.toISOString(),
    id: r.id,
  }));
  return { items: page.items.map(toOut), nextCursor: page.nextCursor };
}

/** Deletes the screenshot and its image asset. */
export async function deleteScreenshot(deps: Deps, s: Scope, id: string): Promise<{ success: true }> {
  if (!isUuid(id)) throw webdataErrors.screenshotNotFound();
  const [gone] = await deps.db.orm
    .delete(shots)
    .where(and(tenant(s), eq(shots.id, id)))
    .returning();
  if (!gone) throw webdataErrors.screenshotNotFound();
  if (gone.assetId) await deleteAssets(deps, s, [gone.assetId]);
  return { success: true };
}

/** The job: renders, stores the image, records the outcome. Never throws for a page that fails. */
export async function runScreenshot(deps: Deps, id: string, signal?: AbortSignal): Promise<void> {
  const [row] = await deps.db.orm
    .update(shots)
    .set({ status: 'processing', updatedAt: deps.clock.now() })
    .where(and(eq(shots.id, id), eq(shots.status, 'pending')))
    .returning();
  // Deleted meanwhile, or already taken by another worker.
  if (!row) return;
  const started = performance.now();
  const scope = { orgId: row.orgId, environment: row.environment as Environment };
  try {
    const shot = await capture(
      sharedBrowserPool(deps.config),
      row.url,
      row.options as ScreenshotOptions,
      signal,
    );
    const asset = await storeAsset(deps, {
      ...scope,
      bytes: shot.bytes,
      filename: `screenshot-${row.id}.${shot.ext}`,
      mimeType: shot.mimeType,
      folder: 'webdata/screenshots',
      origin: 'derived',
      metadata: { screenshotId: row.id, url: row.url },
    });
    const [done] = await deps.db.orm
      .update(shots)
      .set({
        status: 'completed',
        assetId: asset.assetId,
        imageUrl: asset.cdnUrl,
        imageSize: shot.bytes.length,
        imageWidth: shot.width,
        imageHeight: shot.height,
        // Kept beside the request in `options` (decision 112): what the capture found, not what was asked.
        options: { ...row.options, capture: { pageHeight: shot.pageHeight, truncated: shot.truncated } },
        processingTimeMs: Math.round(performance.now() - started),
        completedAt: deps.clock.now(),
        updatedAt: deps.clock.now(),
      })
      .where(eq(shots.id, row.id))
      .returning({ id: shots.id });
    // Deleted while it rendered: the image has no owner left.
    if (!done) await deleteAssets(deps, scope, [asset.assetId]);
  } catch (err) {
    const message = err instanceof ApiError ? err.message : 'The screenshot failed unexpectedly.';
    if (!(err instanceof ApiError)) deps.log.error({ err, screenshotId: row.id }, 'screenshot failed');
    await deps.db.orm
      .update(shots)
      .set({
        status: 'failed',
        error: message,
        processingTimeMs: Math.round(performance.now() - started),
        completedAt: deps.clock.now(),
        updatedAt: deps.clock.now(),
      })
      .where(eq(shots.id, row.id));
  }
}

async function find(deps: Deps, s: Scope, id: string): Promise<ScreenshotRow> {
  if (!isUuid(id)) throw webdataErrors.screenshotNotFound();
  const [row] = await deps.db.orm
    .select()
    .from(shots)
    .where(and(tenant(s), eq(shots.id, id)));
  if (!row) throw webdataErrors.screenshotNotFound();
  return row;
}

function captureOf(r: ScreenshotRow): { pageHeight: number | null; truncated: boolean } {
  const c = r.options.capture as { pageHeight?: number | null; truncated?: boolean } | undefined;
  return { pageHeight: c?.pageHeight ?? null, truncated: c?.truncated ?? false };
}

function toOut(r: ScreenshotRow): ScreenshotOut {
  return {
    id: r.id,
    url: r.url,
    status: r.status,
    format: r.format as ScreenshotOut['format'],
    fullPage: r.fullPage,
    deviceType: r.deviceType as ScreenshotOut['deviceType'],
    imageUrl: r.imageUrl,
    imageSize: r.imageSize,
    imageWidth: r.imageWidth,
    imageHeight: r.imageHeight,
    truncated: captureOf(r).truncated,
    pageHeight: captureOf(r).pageHeight,
    processingTimeMs: r.processingTimeMs,
    error: r.error,
    createdAt: r.createdAt.toISOString(),
    completedAt: r.completedAt?.toISOString() ?? null,
  };
}
