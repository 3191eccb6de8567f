// CDN figures, each beside a baseline measured in the same run:
//  1. transform throughput (cache misses through GET /cdn/t/…: signature check, asset lookup, blob read,
//     sharp render, cache write) vs raw sharp doing the same operations on the same images in process;
//  2. cache-hit latency vs cache-miss latency at p50 (same server, same images);
//  3. animated resize: cache misses of 12-frame GIFs resized to animated WebP vs raw sharp (`animated: true`);
//  3b. HEIC decode+resize: cache misses of 2000x1500 HEICs (made by Debian's heif-enc; skipped without it) vs
//     raw heic-decode + sharp on the same bytes, and the event loop's longest stall during each side;
//  4. a 10-clip merge's wall time through the merge job's handler (inputs copied from the blob store,
//     ffmpeg, output probed and stored as an asset) vs the same ffmpeg command run directly on local files.
// Usage: npm run bench:cdn [-- --images 8 --rounds 3 --clips 10 --merge-rounds 4]  (DATABASE_URL to run on PostgreSQL;
// --merge-rounds 0 skips the merge part)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { getAsset } from '../src/areas/cdn/assets.ts';
import { createMerge } from '../src/areas/cdn/merge.ts';
import { frameSize, mergeArgs, runFfmpeg } from '../src/areas/cdn/merge-ffmpeg.ts';
import { runMerge } from '../src/areas/cdn/merge-run.ts';
import { storeAsset } from '../src/areas/cdn/uploads.ts';
import { loadConfig } from '../src/config.ts';
import { Keyring } from '../src/core/crypto.ts';
import { createDeps } from '../src/create-deps.ts';
import { buildApp } from '../src/http/app.ts';
import { seedProject, seedV1Tenant } from '../test/seed.ts';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const IMAGES = arg('images', 8);
const ROUNDS = arg('rounds', 3);
const CLIPS = arg('clips', 10);
const MERGE_ROUNDS = arg('merge-rounds', 4);
const HEIC_IMAGES = arg('heic-images', 4);

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-bench-cdn-'));
const config = loadConfig({
  DATA_DIR: dataDir,
  LOG_LEVEL: 'silent',
  PUBLIC_URL: 'http://pier.bench',
  V1_RATE_LIMIT_BURST: '1000000',
  V1_RATE_LIMIT_PER_SEC: '100000',
  ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
});
const deps = await createDeps(config, { keyring: Keyring.random(), inMemory: true });
const app = await buildApp(deps, { logger: false });
await app.ready();
const tenant = await seedV1Tenant(deps);
const scope = { orgId: tenant.org.id, environment: 'production' as const };

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (n: number) => `${n.toFixed(1)} ms`;

// 1 + 2: transforms.
const sources: Buffer[] = [];
for (let i = 0; i < IMAGES; i++) {
  sources.push(
    await sharp({
      create: {
        width: 2000,
        height: 1500,
        channels: 3,
        background: '#000',
        noise: { type: 'gaussian', mean: 120 + i, sigma: 40 },
      },
    })
      .jpeg({ quality: 85 })
      .toBuffer(),
  );
}
const assets: { assetId: string }[] = [];
for (const [i, bytes] of sources.entries()) {
  assets.push(await storeAsset(deps, { ...scope, bytes, filename: `img-${i}.jpg`, mimeType: 'image/jpeg' }));
}
const opts = (w: number) => ({
  width: w,
  height: Math.round((w * 3) / 4),
  fit: 'cover' as const,
  format: 'webp' as const,
  quality: 75,
});
const transformUrl = async (assetId: string, w: number) => {
  const r = await app.inject({
    method: 'POST',
    url: '/v1/cdn/transform',
    headers: { authorization: `Bearer ${tenant.live}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ assetId, options: opts(w) }),
  });
  return (r.json() as { url: string }).url.slice(config.publicUrl.length);
};

const rawRun = async (round: number) => {
  const t0 = performance.now();
  for (const [i, src] of sources.entries()) {
    const o = opts(400 + round * IMAGES + i);
    await sharp(src, { limitInputPixels: 100_000_000 })
      .rotate()
      .resize({ width: o.width, height: o.height, fit: 'cover' })
      .webp({ quality: o.quality })
      .toBuffer();
  }
  return performance.now() - t0;
};
const missTimes: number[] = [];
const pierRun = async (round: number) => {
  const urls: string[] = [];
  for (const [i, a] of assets.entries()) urls.push(await transformUrl(a.assetId, 400 + round * IMAGES + i));
  const t0 = performance.now();
  for (const url of urls) {
    const s = performance.now();
    const r = await app.inject({ method: 'GET', url });
    if (r.statusCode !== 200 || r.headers['x-cache'] !== 'MISS') throw new Error(`transform ${r.statusCode}`);
    missTimes.push(performance.now() - s);
  }
  return { ms: performance.now() - t0, urls };
};
await rawRun(99); // warm-up (libvips caches, JIT)
await pierRun(98);
const ratios: number[] = [];
let lastUrls: string[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const raw = await rawRun(r);
  const pier = await pierRun(r);
  lastUrls = pier.urls;
  const rawRate = (IMAGES / raw) * 1000;
  const pierRate = (IMAGES / pier.ms) * 1000;
  ratios.push(pierRate / rawRate);
  console.log(
    `round ${r + 1}: raw sharp ${rawRate.toFixed(1)} img/s, Pier misses ${pierRate.toFixed(1)} img/s`,
  );
}
console.log(
  `transform throughput Pier/raw sharp: median ${p50(ratios).toFixed(3)}x (2000x1500 JPEG -> cover webp)`,
);

const hitTimes: number[] = [];
for (let k = 0; k < 20; k++) {
  for (const url of lastUrls) {
    const s = performance.now();
    const r = await app.inject({ method: 'GET', url });
    if (r.headers['x-cache'] !== 'HIT') throw new Error('expected a cache hit');
    hitTimes.push(performance.now() - s);
  }
}
console.log(
  `cache hit p50 ${ms(p50(hitTimes))} vs miss p50 ${ms(p50(missTimes))}: hit ${(p50(missTimes) / p50(hitTimes)).toFixed(1)}x faster`,
);

await benchAnimated();
await benchHeic();

// 4: merges.
if (MERGE_ROUNDS > 0) await benchMerges();

async function benchAnimated() {
  const gifs: Buffer[] = [];
  for (let i = 0; i < IMAGES; i++) {
    const frames = await Promise.all(
      Array.from({ length: 12 }, (_, f) =>
        sharp({
          create: {
            width: 480,
            height: 360,
            channels: 3,
            background: '#000',
            noise: { type: 'gaussian', mean: 60 + i * 8 + f * 4, sigma: 30 },
          },
        })
          .png()
          .toBuffer(),
      ),
    );
    gifs.push(
      await sharp(frames, { join: { animated: true } })
        .gif({ delay: 80 })
        .toBuffer(),
    );
  }
  const ids: string[] = [];
  for (const [i, bytes] of gifs.entries()) {
    ids.push(
      (await storeAsset(deps, { ...scope, bytes, filename: `a-${i}.gif`, mimeType: 'image/gif' })).assetId,
    );
  }
  const aOpts = (w: number) => ({ width: w, format: 'webp' as const, quality: 75 });
  const raw = async (round: number) => {
    const t0 = performance.now();
    for (const [i, src] of gifs.entries()) {
      await sharp(src, { animated: true, limitInputPixels: 100_000_000 })
        .rotate()
        .resize({ width: aOpts(200 + round * IMAGES + i).width, fit: 'cover' })
        .webp({ quality: 75 })
        .toBuffer();
    }
    return performance.now() - t0;
  };
  const pier = async (round: number) => {
    const urls: string[] = [];
    for (const [i, id] of ids.entries()) {
      const r = await app.inject({
        method: 'POST',
        url: '/v1/cdn/transform',
        headers: { authorization: `Bearer ${tenant.live}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ assetId: id, options: aOpts(200 + round * IMAGES + i) }),
      });
      urls.push((r.json() as { url: string }).url.slice(config.publicUrl.length));
    }
    const t0 = performance.now();
    for (const url of urls) {
      const r = await app.inject({ method: 'GET', url });
      if (r.statusCode !== 200 || r.headers['x-cache'] !== 'MISS')
        throw new Error(`animated ${r.statusCode}`);
      const pages = (await sharp(r.rawPayload, { animated: true }).metadata()).pages;
      if (pages !== 12) throw new Error(`animation lost: ${pages} frames`);
    }
    return performance.now() - t0;
  };
  await raw(99);
  await pier(98);
  const aRatios: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const rawMs = await raw(r);
    const pierMs = await pier(r);
    aRatios.push(rawMs / pierMs);
    console.log(
      `animated round ${r + 1}: raw sharp ${((IMAGES / rawMs) * 1000).toFixed(1)} gif/s, Pier misses ${((IMAGES / pierMs) * 1000).toFixed(1)} gif/s`,
    );
  }
  console.log(
    `animated resize throughput Pier/raw sharp: median ${p50(aRatios).toFixed(3)}x (12-frame 480x360 GIF -> animated webp)`,
  );
}

async function benchHeic() {
  if (HEIC_IMAGES === 0) return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-bench-heic-'));
  const noise = { type: 'gaussian' as const, mean: 128, sigma: 40 };
  await sharp({ create: { width: 2000, height: 1500, channels: 3, background: '#000', noise } })
    .jpeg({ quality: 90 })
    .toFile(path.join(dir, 'src.jpg'));
  try {
    execFileSync('heif-enc', ['-q', '60', '-o', path.join(dir, 'src.heic'), path.join(dir, 'src.jpg')]);
  } catch {
    console.log('heic: skipped (heif-enc from libheif-examples is not installed)');
    return;
  }
  const heic = fs.readFileSync(path.join(dir, 'src.heic'));
  fs.rmSync(dir, { recursive: true, force: true });
  const decode = createRequire(import.meta.url)('heic-decode') as (i: { buffer: Buffer }) => Promise<{
    width: number;
    height: number;
    data: Uint8ClampedArray;
  }>;
  const ids: string[] = [];
  for (let i = 0; i < HEIC_IMAGES; i++) {
    ids.push(
      (await storeAsset(deps, { ...scope, bytes: heic, filename: `h-${i}.heic`, mimeType: 'image/heic' }))
        .assetId,
    );
  }
  const { monitorEventLoopDelay } = await import('node:perf_hooks');
  const stall = async (run: () => Promise<void>) => {
    const h = monitorEventLoopDelay({ resolution: 5 });
    h.enable();
    const t0 = performance.now();
    await run();
    const took = performance.now() - t0;
    h.disable();
    return { ms: took, stallMs: h.max / 1e6 };
  };
  const raw = (round: number) =>
    stall(async () => {
      for (let i = 0; i < HEIC_IMAGES; i++) {
        const d = await decode({ buffer: heic });
        const o = opts(400 + round * HEIC_IMAGES + i);
        await sharp(d.data, { raw: { width: d.width, height: d.height, channels: 4 } })
          .removeAlpha()
          .resize({ width: o.width, height: o.height, fit: 'cover' })
          .webp({ quality: o.quality })
          .toBuffer();
      }
    });
  const pier = async (round: number) => {
    const urls: string[] = [];
    for (const [i, id] of ids.entries()) urls.push(await transformUrl(id, 400 + round * HEIC_IMAGES + i));
    return stall(async () => {
      for (const url of urls) {
        const r = await app.inject({ method: 'GET', url });
        if (r.statusCode !== 200 || r.headers['x-cache'] !== 'MISS') throw new Error(`heic ${r.statusCode}`);
      }
    });
  };
  await raw(99);
  await pier(98);
  const hRatios: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const a = await raw(r);
    const b = await pier(r);
    hRatios.push(a.ms / b.ms);
    console.log(
      `heic round ${r + 1}: raw heic-decode+sharp ${((HEIC_IMAGES / a.ms) * 1000).toFixed(2)} img/s (longest event-loop stall ${ms(a.stallMs)}), Pier misses ${((HEIC_IMAGES / b.ms) * 1000).toFixed(2)} img/s (stall ${ms(b.stallMs)})`,
    );
  }
  console.log(
    `heic decode+resize throughput Pier/raw: median ${p50(hRatios).toFixed(3)}x (2000x1500 HEIC -> cover webp; Pier decodes in a worker thread)`,
  );
}

async function benchMerges() {
  const clipDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-bench-clips-'));
  const clipIds: string[] = [];
  const clipFiles: string[] = [];
  for (let i = 0; i < CLIPS; i++) {
    const file = path.join(clipDir, `c${i}.mp4`);
    execFileSync('ffmpeg', [
      ...['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', `testsrc=size=640x360:rate=30`],
      ...[
        '-f',
        'lavfi',
        '-i',
        `sine=frequency=${300 + i * 50}`,
        '-t',
        '2',
        '-c:v',
        'libx264',
        '-preset',
        'veryfast',
      ],
      ...['-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', file],
    ]);
    clipFiles.push(file);
    const a = await storeAsset(deps, {
      ...scope,
      bytes: fs.readFileSync(file),
      filename: `c${i}.mp4`,
      mimeType: 'video/mp4',
    });
    clipIds.push(a.assetId);
  }
  const project = await seedProject(deps, tenant.org);
  // Pier's ffmpeg goes through a wrapper that writes down its arguments, so the bench can show the direct run
  // is the very same command (only the file paths differ).
  const argsFile = path.join(clipDir, 'pier-args.txt');
  const wrapper = path.join(clipDir, 'ffmpeg-wrapper.sh');
  fs.writeFileSync(wrapper, `#!/bin/sh\nprintf '%s\\n' "$@" > '${argsFile}'\nexec ffmpeg "$@"\n`, {
    mode: 0o755,
  });
  (deps.config.media as { ffmpegPath: string }).ffmpegPath = wrapper;
  // The direct plan uses the durations Pier probed at upload, as Pier's own plan does.
  const clipAssets = await Promise.all(clipIds.map((id) => getAsset(deps, scope, id)));
  const directArgs = (out: string) =>
    mergeArgs({
      segments: clipFiles.map((file, i) => ({
        file,
        kind: 'video' as const,
        start: 0,
        duration: clipAssets[i]!.duration!,
        hasAudio: true,
      })),
      format: 'mp4',
      ...frameSize(720, 'auto', { width: 640, height: 360 }),
      out,
    });
  const totalSec = clipAssets.reduce((t, a) => t + (a.duration ?? 0), 0);
  const runDirect = async (r: number) => {
    const d0 = performance.now();
    await runFfmpeg('ffmpeg', directArgs(path.join(clipDir, `direct-${r}.mp4`)), { totalSec });
    return performance.now() - d0;
  };
  const runPier = async (r: number) => {
    const p0 = performance.now();
    await runMerge(deps, await createMergeNoQueue(r));
    return performance.now() - p0;
  };
  const directTimes: number[] = [];
  const pierTimes: number[] = [];
  const mergeRatios: number[] = [];
  // Interleaved, and the order flips each round, so a burst of load hits both sides alike.
  for (let r = 0; r < MERGE_ROUNDS; r++) {
    let direct: number;
    let pier: number;
    if (r % 2 === 0) {
      direct = await runDirect(r);
      pier = await runPier(r);
    } else {
      pier = await runPier(r);
      direct = await runDirect(r);
    }
    directTimes.push(direct);
    pierTimes.push(pier);
    mergeRatios.push(pier / direct);
    console.log(`merge round ${r + 1}: direct ffmpeg ${ms(direct)}, Pier job ${ms(pier)}`);
  }
  const strip = (args: string[]) => args.map((a) => (a.startsWith('/') ? '<file>' : a));
  const pierArgs = fs.readFileSync(argsFile, 'utf8').trimEnd().split('\n');
  const same = JSON.stringify(strip(pierArgs)) === JSON.stringify(strip(directArgs('/out')));
  console.log(`same ffmpeg command as Pier's (paths aside): ${same ? 'yes' : 'NO'}`);
  if (!same) console.log(`Pier: ${pierArgs.join(' ')}\ndirect: ${directArgs('/out').join(' ')}`);
  console.log(
    `10-clip merge wall time Pier/direct: median of medians ${(p50(pierTimes) / p50(directTimes)).toFixed(3)}x, median of round ratios ${p50(mergeRatios).toFixed(3)}x (${CLIPS} x 2 s 360p clips -> 720p mp4)`,
  );

  /** The merge row as POST /video/merge makes it; the handler is then run here instead of by a worker. */
  async function createMergeNoQueue(round: number): Promise<string> {
    const enqueue = deps.jobs.enqueue.bind(deps.jobs);
    (deps.jobs as { enqueue: unknown }).enqueue = async () => null;
    try {
      const job = await createMerge(deps, scope, {
        projectSlug: project.slug,
        inputs: clipIds.map((assetId) => ({ assetId })),
        output: { format: 'mp4', quality: '720p', aspectRatio: 'auto', filename: `bench-${round}.mp4` },
      });
      return job.id;
    } finally {
      (deps.jobs as { enqueue: unknown }).enqueue = enqueue;
    }
  }
  fs.rmSync(clipDir, { recursive: true, force: true });
}

await app.close();
await deps.db.close();
fs.rmSync(dataDir, { recursive: true, force: true });
