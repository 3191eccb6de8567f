import { spawn } from 'node:child_process';
import { errors } from '../../core/errors.ts';

// The merge engine, no database: a plan of local files becomes one ffmpeg command (every visual input scaled
// and letterboxed to the output frame, silent audio for inputs without sound, concatenated, optionally mixed
// with a faded, looped soundtrack), run with `-progress pipe:1` for a 0–100 progress, killed on abort.

export type MergeSegment = {
  file: string;
  kind: 'video' | 'image';
  /** Seconds of this input in the output (after trimming). */
  duration: number;
  /** Trim start (videos only). */
  start?: number;
  hasAudio: boolean;
};

export type MergePlan = {
  segments: MergeSegment[];
  soundtrack?: { file: string; loop: boolean; fadeIn: number; fadeOut: number };
  format: 'mp4' | 'webm';
  width: number;
  height: number;
  out: string;
};

export const QUALITY_SHORT_EDGE = {
  '360p': 360,
  '480p': 480,
  '720p': 720,
  '1080p': 1080,
  '1440p': 1440,
  '2160p': 2160,
};
const FPS = 30;
const RATE = 44_100;

const even = (n: number) => Math.max(2, Math.round(n / 2) * 2);

/** The output frame: the short edge from the quality, the shape from the aspect ratio (auto: the first input's). */
export function frameSize(
  shortEdge: number,
  aspect: 'auto' | '16:9' | '9:16' | '1:1',
  first: { width: number; height: number } | undefined,
): { width: number; height: number } {
  let shape = aspect;
  if (shape === 'auto') {
    const w = first?.width ?? 16;
    const h = first?.height ?? 9;
    shape = w > h ? '16:9' : w < h ? '9:16' : '1:1';
  }
  if (shape === '1:1') return { width: shortEdge, height: shortEdge };
  const long = even((shortEdge * 16) / 9);
  return shape === '16:9' ? { width: long, height: shortEdge } : { width: shortEdge, height: long };
}

export function totalDuration(plan: MergePlan): number {
  return plan.segments.reduce((s, x) => s + x.duration, 0);
}

const fmt = (n: number) => n.toFixed(3);

export function mergeArgs(plan: MergePlan): string[] {
  const { width: W, height: H } = plan;
  const args = ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error', '-nostats', '-progress', 'pipe:1'];
  for (const s of plan.segments) {
    if (s.kind === 'image')
      args.push('-loop', '1', '-framerate', String(FPS), '-t', fmt(s.duration), '-i', s.file);
    else args.push(...(s.start ? ['-ss', fmt(s.start)] : []), '-t', fmt(s.duration), '-i', s.file);
  }
  const filters: string[] = [];
  const pairs: string[] = [];
  plan.segments.forEach((s, i) => {
    const d = fmt(s.duration);
    filters.push(
      `[${i}:v]scale=${W}:${H}:force_original_aspect_ratio=decrease,pad=${W}:${H}:(ow-iw)/2:(oh-ih)/2:color=black,` +
        `setsar=1,fps=${FPS},format=yuv420p,trim=duration=${d},setpts=PTS-STARTPTS[v${i}]`,
    );
    filters.push(
      s.hasAudio
        ? `[${i}:a]aformat=sample_rates=${RATE}:channel_layouts=stereo,apad,atrim=duration=${d},asetpts=PTS-STARTPTS[a${i}]`
        : `anullsrc=r=${RATE}:cl=stereo,atrim=duration=${d}[a${i}]`,
    );
    pairs.push(`[v${i}][a${i}]`);
  });
  filters.push(`${pairs.join('')}concat=n=${plan.segments.length}:v=1:a=1[vout][acat]`);
  let audioOut = '[acat]';
  if (plan.soundtrack) {
    const st = plan.soundtrack;
    const k = plan.segments.length;
    if (st.loop) args.push('-stream_loop', '-1');
    args.push('-i', st.file);
    const total = totalDuration(plan);
    const chain = [
      `aformat=sample_rates=${RATE}:channel_layouts=stereo`,
      'apad',
      `atrim=duration=${fmt(total)}`,
    ];
    if (st.fadeIn > 0) chain.push(`afade=t=in:st=0:d=${fmt(st.fadeIn)}`);
    if (st.fadeOut > 0)
      chain.push(`afade=t=out:st=${fmt(Math.max(0, total - st.fadeOut))}:d=${fmt(st.fadeOut)}`);
    filters.push(`[${k}:a]${chain.join(',')}[bg]`);
    filters.push('[acat][bg]amix=inputs=2:duration=first:dropout_transition=0:normalize=0[aout]');
    audioOut = '[aout]';
  }
  args.push('-filter_complex', filters.join(';'), '-map', '[vout]', '-map', audioOut);
  if (plan.format === 'mp4') {
    args.push('-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-c:a', 'aac', '-b:a', '128k');
    args.push('-movflags', '+faststart', '-f', 'mp4');
  } else {
    args.push('-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-row-mt', '1', '-b:v', '0');
    args.push('-crf', '35', '-c:a', 'libopus', '-f', 'webm');
  }
  args.push(plan.out);
  return args;
}

/**
 * What the output of a plan is, known without probing it: the codecs and frame the command sets, the length
 * ffmpeg reported. Storing a merge output with these instead of an ffprobe pass saves a process start
 * (about a second on a loaded machine) per merge; the engine tests probe real outputs against them.
 */
export function outputFacts(plan: MergePlan, outSec: number | null) {
  const mp4 = plan.format === 'mp4';
  const duration = Math.round((outSec ?? totalDuration(plan)) * 1000) / 1000;
  return {
    mimeType: mp4 ? 'video/mp4' : 'video/webm',
    type: 'video' as const,
    status: 'ready' as const,
    error: null,
    width: plan.width,
    height: plan.height,
    duration,
    media: {
      duration,
      videoCodec: mp4 ? 'h264' : 'vp9',
      audioCodec: mp4 ? 'aac' : 'opus',
      hasVideo: true,
      hasAudio: true,
    },
  };
}

/** ffmpeg processes of merges running in this process, by merge id (tests check none outlive a cancel). */
export const runningFfmpeg = new Map<string, number>();

/**
 * Runs ffmpeg; `onProgress` gets 0–99 as output time advances; resolves with the output's length as ffmpeg's
 * last progress report gave it. An abort kills ffmpeg (SIGKILL) and rejects
 * once the process has exited, so nothing outlives a cancel.
 */
export function runFfmpeg(
  ffmpegPath: string,
  args: string[],
  o: { totalSec: number; onProgress?: (pct: number) => void; signal?: AbortSignal; tag?: string },
): Promise<{ outSec: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(ffmpegPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    if (o.tag && child.pid) runningFfmpeg.set(o.tag, child.pid);
    let stderr = '';
    let buf = '';
    let outSec: number | null = null;
    child.stderr.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop() ?? '';
      for (const line of lines) {
        const m = /^out_time_us=(\d+)/.exec(line);
        if (m) outSec = Number(m[1]) / 1e6;
        if (m && o.totalSec > 0) {
          o.onProgress?.(Math.min(99, Math.floor((Number(m[1]) / 1e6 / o.totalSec) * 100)));
        }
      }
    });
    const onAbort = () => child.kill('SIGKILL');
    if (o.signal?.aborted) onAbort();
    o.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (err) => {
      o.signal?.removeEventListener('abort', onAbort);
      if (o.tag) runningFfmpeg.delete(o.tag);
      reject(errors.unavailable('FFMPEG_UNAVAILABLE', `ffmpeg could not be started: ${err.message}`));
    });
    child.on('close', (code) => {
      o.signal?.removeEventListener('abort', onAbort);
      if (o.tag) runningFfmpeg.delete(o.tag);
      if (o.signal?.aborted) reject(new MergeAborted());
      else if (code === 0) resolve({ outSec });
      else
        reject(
          new Error(`ffmpeg failed: ${stderr.trim().split('\n').slice(-2).join(' ') || `exit ${code}`}`),
        );
    });
  });
}

export class MergeAborted extends Error {
  constructor() {
    super('The merge was cancelled.');
  }
}
