import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Deps } from '../../deps.ts';
import { storeAsset } from './uploads.ts';

// HLS for adaptive streaming: one ffmpeg run encodes every rung of a small ladder (360p, 720p, 1080p — only
// those no taller than the source; a source under 360 lines gets one rendition at its own size) as
// H.264/AAC in 4 s segments, and writes a master playlist that lists them with bandwidth and resolution.
// Every segment and playlist becomes an asset of its own, and each playlist names the next level by a
// relative URL (`../<assetId>/<filename>`), so the whole tree plays from any host or base path.

export const HLS_SEGMENT_SEC = 4;

/** Lines, and video bitrate in kbit/s (Apple's authoring guide's ballpark for H.264). */
export const HLS_LADDER = [
  { height: 360, kbps: 800 },
  { height: 720, kbps: 2800 },
  { height: 1080, kbps: 5000 },
] as const;

export function hlsRungs(sourceHeight: number | null): { height: number; kbps: number }[] {
  const h = sourceHeight ?? 360;
  const fit = HLS_LADDER.filter((r) => r.height <= h);
  // Even heights only: yuv420p needs them.
  return fit.length ? [...fit] : [{ height: Math.max(2, h - (h % 2)), kbps: 600 }];
}

export function hlsArgs(src: string, dir: string, rungs: { height: number; kbps: number }[], audio: boolean) {
  const split = rungs.map((_, i) => `[s${i}]`).join('');
  const scales = rungs.map((r, i) => `[s${i}]scale=-2:${r.height}[v${i}]`).join(';');
  const maps = rungs.flatMap((_, i) => ['-map', `[v${i}]`, ...(audio ? ['-map', '0:a:0'] : [])]);
  const rates = rungs.flatMap((r, i) => [
    `-b:v:${i}`,
    `${r.kbps}k`,
    `-maxrate:v:${i}`,
    `${Math.round(r.kbps * 1.07)}k`,
    `-bufsize:v:${i}`,
    `${Math.round(r.kbps * 1.5)}k`,
  ]);
  const streamMap = rungs.map((_, i) => (audio ? `v:${i},a:${i}` : `v:${i}`)).join(' ');
  return [
    ...['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', '-progress', 'pipe:1'],
    ...['-i', src, '-filter_complex', `[0:v]split=${rungs.length}${split};${scales}`],
    ...maps,
    ...['-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p'],
    ...['-force_key_frames', `expr:gte(t,n_forced*${HLS_SEGMENT_SEC})`],
    ...rates,
    ...(audio ? ['-c:a', 'aac', '-b:a', '128k', '-ac', '2'] : []),
    ...['-f', 'hls', '-hls_time', String(HLS_SEGMENT_SEC), '-hls_playlist_type', 'vod'],
    ...['-hls_segment_filename', path.join(dir, 'v%v', 'seg%03d.ts')],
    ...['-master_pl_name', 'master.m3u8', '-var_stream_map', streamMap],
    path.join(dir, 'v%v', 'index.m3u8'),
  ];
}

type Common = Omit<Parameters<typeof storeAsset>[1], 'filename' | 'mimeType' | 'file' | 'bytes' | 'stream'>;
const PLAYLIST = 'application/vnd.apple.mpegurl';

/** Stores the segments, each rendition's playlist, then the master; answers the master's asset id. */
export async function storeHlsLadder(
  deps: Deps,
  common: Common,
  dir: string,
  rungs: { height: number }[],
  stem: string,
  audio: boolean,
): Promise<string> {
  const variants = new Map<string, string>();
  for (const [i, rung] of rungs.entries()) {
    const sub = path.join(dir, `v${i}`);
    const lines: string[] = [];
    let seconds: number | undefined;
    for (const line of (await fsp.readFile(path.join(sub, 'index.m3u8'), 'utf8')).split('\n')) {
      const name = line.trim();
      if (!name || name.startsWith('#')) {
        if (name.startsWith('#EXTINF:')) seconds = Number.parseFloat(name.slice(8));
        lines.push(line);
        continue;
      }
      // What each segment is, ffmpeg just said: an ffprobe per segment would cost a process start each.
      const media = {
        hasVideo: true,
        hasAudio: audio,
        videoCodec: 'h264',
        audioCodec: audio ? 'aac' : undefined,
      };
      const seg = await storeAsset(deps, {
        ...common,
        file: path.join(sub, name),
        filename: name,
        mimeType: 'video/mp2t',
        known: {
          mimeType: 'video/mp2t',
          type: 'video',
          status: 'ready',
          error: null,
          width: null,
          height: rung.height,
          duration: seconds ?? null,
          media: { ...media, duration: seconds },
        },
      });
      lines.push(`../${seg.assetId}/${name}`);
    }
    const filename = `${stem}-${rung.height}p.m3u8`;
    await fsp.writeFile(path.join(sub, 'pier.m3u8'), lines.join('\n'));
    const pl = await storeAsset(deps, {
      ...common,
      file: path.join(sub, 'pier.m3u8'),
      filename,
      mimeType: PLAYLIST,
    });
    variants.set(`v${i}/index.m3u8`, `../${pl.assetId}/${encodeURIComponent(filename)}`);
  }
  const master = (await fsp.readFile(path.join(dir, 'master.m3u8'), 'utf8'))
    .split('\n')
    .map((line) => variants.get(line.trim()) ?? line)
    .join('\n');
  await fsp.writeFile(path.join(dir, 'pier-master.m3u8'), master);
  const a = await storeAsset(deps, {
    ...common,
    file: path.join(dir, 'pier-master.m3u8'),
    filename: `${stem}.m3u8`,
    mimeType: PLAYLIST,
  });
  return a.assetId;
}
