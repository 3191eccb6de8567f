import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Fixtures, fixtures } from '../../../test/cdn-kit.ts';
import { probeMedia } from './inspect.ts';
import {
  frameSize,
  MergeAborted,
  mergeArgs,
  runFfmpeg,
  runningFfmpeg,
  totalDuration,
} from './merge-ffmpeg.ts';

// The merge engine on files alone (no database): real ffmpeg, outputs probed with ffprobe.

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('merge engine', () => {
  let fx: Fixtures;
  let files: { mp4: string; png: string; mp3: string };

  beforeAll(async () => {
    fx = await fixtures();
    const dir = fs.mkdtempSync(path.join(fx.dir, 'engine-'));
    files = { mp4: path.join(dir, 'a.mp4'), png: path.join(dir, 'b.png'), mp3: path.join(dir, 'c.mp3') };
    fs.writeFileSync(files.mp4, fx.mp4);
    fs.writeFileSync(files.png, fx.png);
    fs.writeFileSync(files.mp3, fx.mp3);
  });

  it('sizes the frame from the short edge and aspect ratio', () => {
    expect(frameSize(720, '16:9', undefined)).toEqual({ width: 1280, height: 720 });
    expect(frameSize(360, 'auto', { width: 160, height: 120 })).toEqual({ width: 640, height: 360 });
    expect(frameSize(1080, 'auto', { width: 1080, height: 1920 })).toEqual({ width: 1080, height: 1920 });
    expect(frameSize(480, '1:1', { width: 10, height: 20 })).toEqual({ width: 480, height: 480 });
  });

  it('merges a trimmed video and an image with a looped, faded soundtrack into mp4', async () => {
    const out = path.join(path.dirname(files.mp4), 'out.mp4');
    const plan = {
      segments: [
        { file: files.mp4, kind: 'video' as const, start: 0.2, duration: 0.6, hasAudio: true },
        { file: files.png, kind: 'image' as const, duration: 1.5, hasAudio: false },
      ],
      soundtrack: { file: files.mp3, loop: true, fadeIn: 0.5, fadeOut: 0.5 },
      format: 'mp4' as const,
      ...frameSize(360, '9:16', undefined),
      out,
    };
    const seen: number[] = [];
    await runFfmpeg('ffmpeg', mergeArgs(plan), {
      totalSec: totalDuration(plan),
      onProgress: (p) => seen.push(p),
    });
    const probed = await probeMedia(out, 'ffprobe');
    if ('error' in probed) throw new Error(probed.error);
    expect([probed.width, probed.height]).toEqual([360, 640]);
    expect(probed.info).toMatchObject({
      hasVideo: true,
      hasAudio: true,
      videoCodec: 'h264',
      audioCodec: 'aac',
    });
    expect(probed.info.duration).toBeGreaterThan(1.9);
    expect(probed.info.duration).toBeLessThan(2.4);
    expect(seen.length).toBeGreaterThan(0);
    expect(Math.max(...seen)).toBeLessThanOrEqual(99);
  });

  it('writes webm', async () => {
    const out = path.join(path.dirname(files.mp4), 'out.webm');
    const plan = {
      segments: [{ file: files.png, kind: 'image' as const, duration: 0.5, hasAudio: false }],
      format: 'webm' as const,
      ...frameSize(360, '1:1', undefined),
      out,
    };
    await runFfmpeg('ffmpeg', mergeArgs(plan), { totalSec: 0.5 });
    const probed = await probeMedia(out, 'ffprobe');
    if ('error' in probed) throw new Error(probed.error);
    expect(probed.info).toMatchObject({ videoCodec: 'vp9', audioCodec: 'opus', hasAudio: true });
    expect([probed.width, probed.height]).toEqual([360, 360]);
  });

  it('kills ffmpeg on abort and leaves no process behind', async () => {
    const out = path.join(path.dirname(files.mp4), 'long.mp4');
    const plan = {
      segments: [{ file: files.png, kind: 'image' as const, duration: 3600, hasAudio: false }],
      format: 'mp4' as const,
      ...frameSize(360, '16:9', undefined),
      out,
    };
    const ac = new AbortController();
    let pid = 0;
    const run = runFfmpeg('ffmpeg', mergeArgs(plan), {
      totalSec: 3600,
      signal: ac.signal,
      tag: 'abort-test',
      onProgress: () => {
        pid = runningFfmpeg.get('abort-test') ?? 0;
        ac.abort();
      },
    });
    await expect(run).rejects.toBeInstanceOf(MergeAborted);
    expect(pid).toBeGreaterThan(0);
    expect(alive(pid)).toBe(false);
    expect(runningFfmpeg.has('abort-test')).toBe(false);
  });
});
