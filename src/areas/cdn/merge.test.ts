import fsp from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixtures, fixtures, getCdn, uploadAsset } from '../../../test/cdn-kit.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedProject, seedV1Tenant } from '../../../test/seed.ts';
import { expectV1Security, type V1Tenant } from '../../../test/v1-security.ts';
import { parseOutboundAllow } from '../../core/net/outbound-allow.ts';
import { webhookDeliveries } from '../../core/webhook-tables.ts';
import { attemptWebhook } from '../../core/webhooks.ts';
import { probeMedia } from './inspect.ts';
import { runningFfmpeg } from './merge-ffmpeg.ts';

// Video merges through the API with the job worker running real ffmpeg: the output becomes an asset
// (probed), inputs are checked at creation, cancel kills ffmpeg, other tenants see 404.

// Real ffmpeg runs: on a loaded 2-core machine a merge can take far longer than the default 30 s.
describe('CDN video merges', { timeout: 120_000 }, () => {
  let t: TestApp;
  let fx: Fixtures;
  let a: V1Tenant;
  let slug: string;
  let ids: { video: string; image: string; audio: string; fakeVideo: string };

  beforeAll(async () => {
    // The test clock stands still, so the v1 rate limit's bucket never refills: polling needs a large one.
    t = await testApp({
      background: true,
      env: { V1_RATE_LIMIT_BURST: '1000000', V1_RATE_LIMIT_PER_SEC: '100000' },
    });
    fx = await fixtures();
    a = await seedV1Tenant(t.deps);
    slug = (await seedProject(t.deps, a.org)).slug;
    const up = async (filename: string, mimeType: string, bytes: Buffer) =>
      (await uploadAsset(t, a.live, { filename, mimeType, bytes })).confirm!.json().assetId as string;
    ids = {
      video: await up('clip.mp4', 'video/mp4', fx.mp4),
      image: await up('still.png', 'image/png', fx.png),
      audio: await up('tone.mp3', 'audio/mpeg', fx.mp3),
      fakeVideo: await up('fake.mp4', 'video/mp4', fx.png),
    };
  }, 180_000); // fixtures and a worker on a loaded machine
  afterAll(() => t.close());

  const until = async (
    id: string,
    done: (j: { status: string; progress: number }) => boolean,
    ms = 60_000,
  ) => {
    const end = Date.now() + ms;
    for (;;) {
      const j = (await t.v1('GET', `/cdn/video/merge/${id}`, a.live)).json();
      if (done(j)) return j;
      if (Date.now() > end) {
        const q = await t.deps.db.query(
          "select state, started_on, data from pgboss.job where name = 'cdn.video.merge' order by created_on",
        );
        throw new Error(
          `merge ${id} stuck at ${JSON.stringify(j)}; queue ${JSON.stringify(q)}; ffmpeg ${[...runningFfmpeg.keys()]}`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  it('merges video, image and a soundtrack into an mp4 asset', async () => {
    const created = await t.v1('POST', '/cdn/video/merge', a.live, {
      projectSlug: slug,
      inputs: [
        { assetId: ids.video, startTime: 0.1, endTime: 0.9 },
        { assetId: ids.image, duration: 1 },
      ],
      audioTrack: { assetId: ids.audio, loop: true, fadeIn: 0.2, fadeOut: 0.2 },
      output: { quality: '360p', filename: 'together.mp4' },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(['pending', 'queued', 'processing']).toContain(created.json().status);
    const job = await until(created.json().id, (j) => j.status === 'completed' || j.status === 'failed');
    expect(job.error).toBeNull();
    expect(job).toMatchObject({ status: 'completed', progress: 100, projectSlug: slug });
    expect(job.outputAsset.duration).toBeGreaterThan(1.6);
    expect(job.outputAsset.duration).toBeLessThan(2.2);
    const asset = (await t.v1('GET', `/cdn/assets/${job.outputAsset.assetId}`, a.live)).json();
    expect(asset).toMatchObject({
      filename: 'together.mp4',
      type: 'video',
      width: 640,
      height: 360,
      videoCodec: 'h264',
      audioCodec: 'aac',
      size: job.outputAsset.size,
    });
    const delivered = await getCdn(t, job.outputAsset.cdnUrl);
    expect(delivered.statusCode).toBe(200);
    // The asset's facts come from the command, not a probe (outputFacts): the real bytes must agree.
    const file = path.join(await fsp.mkdtemp(path.join(os.tmpdir(), 'pier-merge-out-')), 'out.mp4');
    await fsp.writeFile(file, delivered.rawPayload);
    const probed = await probeMedia(file, 'ffprobe');
    await fsp.rm(path.dirname(file), { recursive: true, force: true });
    expect(probed).toMatchObject({
      width: 640,
      height: 360,
      info: { videoCodec: 'h264', audioCodec: 'aac', hasVideo: true, hasAudio: true },
    });
    expect(Math.abs(('info' in probed ? probed.info.duration! : 0) - asset.duration)).toBeLessThan(0.1);
    const usage = (await t.v1('GET', `/cdn/usage/storage?projectSlug=${slug}`, a.live)).json();
    expect(usage.breakdown.derived).toMatchObject({ objectCount: 1, bytes: job.outputAsset.size });
    const list = (await t.v1('GET', `/cdn/video/merge?projectSlug=${slug}&status=completed`, a.live)).json();
    expect(list.items.map((x: { id: string }) => x.id)).toContain(job.id);
  });

  it('refuses inputs that cannot be merged with a descriptive 400', async () => {
    const bad = async (body: Record<string, unknown>) => {
      const r = await t.v1('POST', '/cdn/video/merge', a.live, { projectSlug: slug, ...body });
      expect(r.statusCode, r.body).toBe(400);
      return r.json().error;
    };
    expect((await bad({ inputs: [{ assetId: ids.fakeVideo, duration: 2 }] })).message).toMatch(
      /uploaded as video\/mp4 but its bytes are a still image \(image\/png\)/,
    );
    expect((await bad({ inputs: [{ assetId: ids.audio }] })).message).toMatch(/audio-only/);
    expect((await bad({ inputs: [{ assetId: ids.image }] })).message).toMatch(/images need a duration/);
    expect((await bad({ inputs: [{ assetId: ids.image, duration: 3601 }] })).code).toBe('VALIDATION_ERROR');
    expect((await bad({ inputs: [] })).code).toBe('VALIDATION_ERROR');
    expect(
      (await bad({ inputs: Array.from({ length: 101 }, () => ({ assetId: ids.image, duration: 1 })) })).code,
    ).toBe('VALIDATION_ERROR');
    const noSound = await bad({
      inputs: [{ assetId: ids.video }],
      audioTrack: { assetId: ids.image },
    });
    expect(noSound.message).toMatch(/must contain an audio stream/);
    expect(
      (await bad({ inputs: [{ assetId: ids.video }], audioTrack: { assetId: ids.audio, fadeIn: 11 } })).code,
    ).toBe('VALIDATION_ERROR');
    expect((await bad({ inputs: [{ assetId: ids.video }], output: { quality: '4k' } })).code).toBe(
      'VALIDATION_ERROR',
    );
    expect(
      (await bad({ inputs: [{ assetId: ids.video }], output: { filename: 'x'.repeat(256) } })).code,
    ).toBe('VALIDATION_ERROR');
    const other = await seedV1Tenant(t.deps);
    const foreign = await t.v1('POST', '/cdn/video/merge', other.live, {
      projectSlug: slug,
      inputs: [{ assetId: ids.video }],
    });
    expect(foreign.json().error.code).toBe('PROJECT_NOT_FOUND');
  });

  it('cancels mid-merge and leaves no ffmpeg process', async () => {
    const created = await t.v1('POST', '/cdn/video/merge', a.live, {
      projectSlug: slug,
      inputs: [{ assetId: ids.image, duration: 3600 }],
      output: { quality: '360p' },
    });
    const id = created.json().id;
    await until(id, (j) => j.status === 'processing' && j.progress > 0);
    const pid = runningFfmpeg.get(id);
    expect(pid).toBeGreaterThan(0);
    const cancel = await t.v1('POST', `/cdn/video/merge/${id}/cancel`, a.live, {});
    expect(cancel.json().status).toBe('cancelled');
    const end = Date.now() + 5000;
    while (runningFfmpeg.has(id) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    expect(runningFfmpeg.has(id)).toBe(false);
    expect(() => process.kill(pid!, 0)).toThrow();
    const again = await t.v1('POST', `/cdn/video/merge/${id}/cancel`, a.live, {});
    expect([again.statusCode, again.json().error.code]).toEqual([409, 'MERGE_NOT_CANCELLABLE']);
    expect((await t.v1('GET', `/cdn/video/merge/${id}`, a.live)).json()).toMatchObject({
      status: 'cancelled',
      outputAsset: null,
    });
  });

  it('hides merge jobs from other tenants', async () => {
    const created = await t.v1('POST', '/cdn/video/merge', a.live, {
      projectSlug: slug,
      inputs: [{ assetId: ids.image, duration: 0.5 }],
      output: { quality: '360p' },
    });
    const id = created.json().id;
    await expectV1Security(t, {
      method: 'GET',
      url: `/cdn/video/merge/${id}`,
      owner: a,
      notFoundCode: 'MERGE_JOB_NOT_FOUND',
    });
    await until(id, (j) => j.status === 'completed' || j.status === 'failed');
    await expectV1Security(t, {
      method: 'POST',
      url: `/cdn/video/merge/${id}/cancel`,
      body: {},
      owner: a,
      notFoundCode: 'MERGE_JOB_NOT_FOUND',
    });
    const list = await t.v1('GET', '/cdn/video/merge', a.live);
    expect(list.statusCode).toBe(400); // projectSlug is required
  });
  it('sends a completion webhook signed with the organization secret (Standard Webhooks)', async () => {
    const created = await t.v1('POST', '/cdn/video/merge', a.live, {
      projectSlug: slug,
      inputs: [{ assetId: ids.image, duration: 0.5 }],
      output: { quality: '360p', format: 'webm' },
      webhookUrl: 'https://hooks.example.com/pier',
    });
    const id = created.json().id;
    const finished = await until(id, (j) => j.status === 'completed' || j.status === 'failed');
    expect(finished.error).toBeNull();
    let delivery: typeof webhookDeliveries.$inferSelect | undefined;
    for (let i = 0; i < 50 && !delivery; i++) {
      [delivery] = await t.deps.db.orm
        .select()
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.orgId, a.org.id));
      if (!delivery) await new Promise((r) => setTimeout(r, 100));
    }
    expect(delivery).toMatchObject({
      url: 'https://hooks.example.com/pier',
      eventType: 'cdn.video.merge.completed',
    });
    // Deliver once more, to a real local receiver opened through OUTBOUND_ALLOW (the SSRF guard stays on).
    let seen: { headers: Record<string, string>; body: string } | undefined;
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        seen = { headers: req.headers as Record<string, string>, body };
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((ok) => receiver.listen(0, '127.0.0.1', ok));
    const port = (receiver.address() as AddressInfo).port;
    await t.deps.db.orm
      .update(webhookDeliveries)
      .set({ status: 'pending', url: `http://127.0.0.1:${port}/pier` })
      .where(eq(webhookDeliveries.id, delivery!.id));
    const allow = parseOutboundAllow('127.0.0.1/32').allow;
    await attemptWebhook({ ...t.deps, config: { outboundAllow: allow } }, delivery!.id);
    receiver.close();
    const secret = (await t.call('getWebhookSecretForCli', { orgSlug: a.org.slug }, a.owner.token)).json()
      .secret;
    expect(secret).toMatch(/^whsec_/);
    const payload = new Webhook(secret).verify(seen!.body, seen!.headers) as {
      type: string;
      data: { id: string };
    };
    expect(payload).toMatchObject({ type: 'cdn.video.merge.completed', data: { id, status: 'completed' } });
    // After a rotation the old signature no longer verifies.
    const rotated = (await t.call('rotateWebhookSecretForCli', { orgSlug: a.org.slug }, a.owner.token)).json()
      .secret;
    expect(rotated).not.toBe(secret);
    expect(() => new Webhook(rotated).verify(seen!.body, seen!.headers)).toThrow();
    const other = await seedV1Tenant(t.deps);
    const foreign = await t.call('getWebhookSecretForCli', { orgSlug: a.org.slug }, other.owner.token);
    expect(foreign.statusCode).toBe(404);
  });
});
