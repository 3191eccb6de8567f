import { modelName } from '../../../core/ai/models.ts';
import { storeAsset } from '../../cdn/index.ts';
import { resolveModelFor } from '../../models/index.ts';
import type { StepDef } from '../definition.ts';
import { price, roundCredits } from '../prices.ts';
import { modelRefOf } from '../workflows.ts';
import { render, type StepCtx, StepError, type StepResult } from './context.ts';

// llm, image, audio and video steps: through the models area (the organization's key first, then the
// platform's), outputs of media steps stored as CDN assets.

const tokenPrice = (c: StepCtx, provider: string) =>
  price(c.deps, `llm.${provider}.per1kTokens` as 'llm.openai.per1kTokens');

export async function runLlm(c: StepCtx, s: StepDef): Promise<StepResult> {
  const resolved = await resolveModelFor(c.deps, c.orgId, modelRefOf(s));
  const prompt = render(s.prompt ?? '', c.data);
  const system = s.system ? render(s.system, c.data) : undefined;
  if (s.outputFormat === 'json') {
    const res = await c.deps.models.generateObject({
      resolved,
      prompt,
      system,
      schema: (s.schema ?? { type: 'object' }) as never,
      abortSignal: c.signal,
    });
    const credits = (res.usage.totalTokens / 1000) * tokenPrice(c, resolved.provider);
    return { output: res.object, credits: roundCredits(credits) };
  }
  const res = await c.deps.models.generateText({ resolved, prompt, system, abortSignal: c.signal });
  return {
    output: res.text,
    credits: roundCredits((res.usage.totalTokens / 1000) * tokenPrice(c, resolved.provider)),
  };
}

async function store(c: StepCtx, s: StepDef, bytes: Buffer, mimeType: string, ext: string) {
  // Image and speech calls take no abort signal: a run cancelled meanwhile keeps no asset.
  if (c.signal.aborted) throw new StepError('Cancelled.');
  const asset = await storeAsset(c.deps, {
    orgId: c.orgId,
    environment: c.environment,
    projectId: c.projectId,
    bytes,
    filename: `${s.id}.${ext}`,
    mimeType,
    folder: `workflows/${c.runId}`,
    origin: 'derived',
    metadata: { workflowRunId: c.runId, stepId: s.id },
  });
  return { assetId: asset.assetId, cdnUrl: asset.cdnUrl, mimeType: asset.mimeType, size: asset.size };
}

const extOf = (mime: string) => mime.split('/')[1]?.replace('mpeg', 'mp3').replace('jpeg', 'jpg') ?? 'bin';

export async function runImage(c: StepCtx, s: StepDef): Promise<StepResult> {
  const resolved = await resolveModelFor(c.deps, c.orgId, modelRefOf(s));
  const res = await c.deps.models.generateImage({
    resolved,
    prompt: render(s.prompt ?? '', c.data),
    size: s.size as `${number}x${number}` | undefined,
  });
  const img = res.images[0];
  if (!img) throw new StepError(`${modelName(resolved)} returned no image.`, true);
  const out = await store(c, s, Buffer.from(img.base64, 'base64'), img.mediaType, extOf(img.mediaType));
  return { output: out, credits: price(c.deps, 'image.perImage') };
}

export async function runAudio(c: StepCtx, s: StepDef): Promise<StepResult> {
  const resolved = await resolveModelFor(c.deps, c.orgId, modelRefOf(s));
  const text = render(s.prompt ?? '', c.data);
  const res = await c.deps.models.generateSpeech({ resolved, text, voice: s.voice });
  const out = await store(
    c,
    s,
    Buffer.from(res.audio.base64, 'base64'),
    res.audio.mediaType,
    extOf(res.audio.mediaType),
  );
  // Speech runs at about 2.5 words a second: the estimate the price is applied to (docs/workflows.md).
  const seconds = Math.max(1, Math.ceil(text.split(/\s+/).filter(Boolean).length / 2.5));
  return {
    output: { ...out, estimatedSeconds: seconds },
    credits: roundCredits(seconds * price(c.deps, 'audio.perSecond')),
  };
}

/** No provider reachable through the models area generates video yet: the step fails and says so. */
export async function runVideo(c: StepCtx, s: StepDef): Promise<StepResult> {
  const resolved = await resolveModelFor(c.deps, c.orgId, modelRefOf(s));
  throw new StepError(
    `Provider '${resolved.provider}' does not offer video generation through Pier (model ${modelName(resolved)}).`,
  );
}
