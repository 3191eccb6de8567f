import fsp from 'node:fs/promises';
import path from 'node:path';
import { and, eq } from 'drizzle-orm';
import type { Deps } from '../../deps.ts';
import { hlsArgs, hlsRungs, storeHlsLadder } from './hls.ts';
import { copyBlobTo, scratchDir } from './local-copy.ts';
import { runFfmpeg } from './merge-ffmpeg.ts';
import type { VideoJobBody } from './schema.ts';
import { cdnAssets, cdnVideoJobs } from './tables.ts';
import { storeAsset } from './uploads.ts';

// One video job on a worker: copy the source locally, run ffmpeg with progress into the row, store the
// outputs as derived assets. HLS (a ladder of renditions under a master playlist) is built by hls.ts.

export function videoArgs(
  kind: Exclude<VideoJobBody['kind'], 'hls'>,
  src: string,
  dir: string,
  o: { at: number; width: number; duration: number },
) {
  const base = ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', '-progress', 'pipe:1'];
  const seek = ['-ss', String(o.at)];
  switch (kind) {
    case 'poster':
      return {
        out: path.join(dir, 'poster.jpg'),
        args: [...base, ...seek, '-i', src, '-frames:v', '1', '-q:v', '2', path.join(dir, 'poster.jpg')],
      };
    case 'thumbnail':
      return {
        out: path.join(dir, 'thumbnail.jpg'),
        args: [
          ...base,
          ...seek,
          '-i',
          src,
          '-frames:v',
          '1',
          '-vf',
          `scale=${o.width}:-2`,
          '-q:v',
          '3',
          path.join(dir, 'thumbnail.jpg'),
        ],
      };
    case 'preview':
      return {
        out: path.join(dir, 'preview.webp'),
        args: [
          ...base,
          ...seek,
          '-t',
          String(o.duration),
          '-i',
          src,
          '-an',
          '-vf',
          `fps=10,scale=${o.width}:-2`,
          '-c:v',
          'libwebp_anim',
          '-loop',
          '0',
          '-quality',
          '70',
          path.join(dir, 'preview.webp'),
        ],
      };
  }
}

export async function runVideoJob(deps: Deps, jobId: string): Promise<void> {
  const [row] = await deps.db.orm
    .update(cdnVideoJobs)
    .set({ status: 'processing', updatedAt: deps.clock.now() })
    .where(and(eq(cdnVideoJobs.id, jobId), eq(cdnVideoJobs.status, 'queued')))
    .returning();
  if (!row) return;
  const s = { orgId: row.orgId, environment: row.environment as 'production' | 'sandbox' };
  const body = row.request as unknown as VideoJobBody;
  const dir = await scratchDir('video');
  const finish = (set: Partial<typeof cdnVideoJobs.$inferInsert>) =>
    deps.db.orm
      .update(cdnVideoJobs)
      .set({ ...set, updatedAt: deps.clock.now(), completedAt: deps.clock.now() })
      .where(eq(cdnVideoJobs.id, jobId));
  try {
    const [src] = await deps.db.orm.select().from(cdnAssets).where(eq(cdnAssets.id, row.assetId));
    const file = src && (await copyBlobTo(deps.blobs, src.blobKey, dir));
    if (!src || !file) throw new Error('The video asset is gone.');
    const length = src.duration ?? 0;
    // Past the end there is no frame: the offset is kept inside the video.
    const at = Math.min(body.at ?? length * 0.1, Math.max(0, length - 0.1));
    const rungs = hlsRungs(src.height);
    const { out, args } =
      body.kind === 'hls'
        ? { out: '', args: hlsArgs(file, dir, rungs, !!src.media?.hasAudio) }
        : videoArgs(body.kind, file, dir, { at, width: body.width ?? 320, duration: body.duration ?? 3 });
    if (body.kind === 'hls') await Promise.all(rungs.map((_, i) => fsp.mkdir(path.join(dir, `v${i}`))));
    let last = 0;
    await runFfmpeg(deps.config.media.ffmpegPath, args, {
      totalSec: body.kind === 'hls' ? length : body.kind === 'preview' ? (body.duration ?? 3) : 0,
      tag: jobId,
      onProgress: (pct) => {
        if (pct <= last) return;
        last = pct;
        void deps.db.orm
          .update(cdnVideoJobs)
          .set({ progress: pct })
          .where(eq(cdnVideoJobs.id, jobId))
          .catch(() => {});
      },
    });
    const stem = src.filename.replace(/\.[^.]*$/, '') || 'video';
    const common = {
      ...s,
      projectId: src.projectId,
      origin: 'derived' as const,
      metadata: { videoJobId: jobId, sourceAssetId: src.id },
    };
    let output: string;
    if (body.kind === 'hls')
      output = await storeHlsLadder(deps, common, dir, rungs, stem, !!src.media?.hasAudio);
    else {
      if (!(await fsp.stat(out).catch(() => null))) throw new Error('ffmpeg wrote no frame at that offset.');
      const ext = path.extname(out);
      const a = await storeAsset(deps, {
        ...common,
        file: out,
        filename: `${stem}-${body.kind}${ext}`,
        mimeType: ext === '.webp' ? 'image/webp' : 'image/jpeg',
      });
      output = a.assetId;
    }
    await finish({ status: 'completed', progress: 100, outputAssetId: output });
  } catch (err) {
    await finish({ status: 'failed', error: String((err as Error)?.message ?? err).slice(0, 1000) });
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}
