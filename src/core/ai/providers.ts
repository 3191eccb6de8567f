import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogle } from '@ai-sdk/google';
import { createMistral } from '@ai-sdk/mistral';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type {
  EmbeddingModel,
  ImageModel,
  JSONSchema7,
  LanguageModel,
  OutputInterface,
  SpeechModel,
} from 'ai';
import type { ModelsConfig, VendorId } from '../../config.ts';
import { modelErrors } from './errors.ts';

// The five provider identifiers of the contract: four vendors and `pier`, the operator's own models.
export const VENDORS = ['openai', 'anthropic', 'google', 'mistral'] as const satisfies readonly VendorId[];
export const PROVIDERS = [...VENDORS, 'pier'] as const;
export type ProviderId = (typeof PROVIDERS)[number];

export function isProvider(value: string): value is ProviderId {
  return (PROVIDERS as readonly string[]).includes(value);
}

export const DEFAULT_BASE_URLS: Record<VendorId, string> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com/v1',
  google: 'https://generativelanguage.googleapis.com/v1beta',
  mistral: 'https://api.mistral.ai/v1',
};

/**
 * Model-name families for bare names (no `provider/` prefix), first match wins. Documented in
 * docs/models.md; anything unmatched goes to `pier` when the operator has configured it.
 */
export const MODEL_FAMILIES: { provider: VendorId; pattern: RegExp; examples: string }[] = [
  {
    provider: 'openai',
    pattern:
      /^(gpt-|chatgpt-|o[1-9](-|$)|text-embedding-3|text-embedding-ada|dall-e-|gpt-image-|tts-|whisper-)/,
    examples: 'gpt-4o-mini, o3-mini, text-embedding-3-small, dall-e-3, tts-1',
  },
  { provider: 'anthropic', pattern: /^claude-/, examples: 'claude-sonnet-4-5, claude-3-5-haiku-latest' },
  {
    provider: 'google',
    pattern: /^(gemini-|gemma-|text-embedding-004|embedding-00|imagen-)/,
    examples: 'gemini-2.5-flash, gemini-embedding-001, imagen-4.0-generate-001',
  },
  {
    provider: 'mistral',
    pattern: /^(mistral-|open-mistral|open-mixtral|codestral|pixtral|ministral|magistral|devstral|voxtral)/,
    examples: 'mistral-small-latest, mistral-embed, codestral-latest',
  },
];

export type ModelRef = { provider: ProviderId; model: string; explicit: boolean };

const MODEL_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._:@/+-]{0,199}$/;

/** `provider/model` wins; a bare name goes by the family table, then to `pier`; null when nothing fits. */
export function parseModelRef(name: string, pierConfigured: boolean): ModelRef | null {
  if (!MODEL_NAME_RE.test(name))
    throw modelErrors.invalidModel(`'${name.slice(0, 80)}' is not a model name.`);
  const slash = name.indexOf('/');
  if (slash > 0) {
    const prefix = name.slice(0, slash);
    if (isProvider(prefix)) return { provider: prefix, model: name.slice(slash + 1), explicit: true };
  }
  for (const f of MODEL_FAMILIES)
    if (f.pattern.test(name)) return { provider: f.provider, model: name, explicit: false };
  return pierConfigured ? { provider: 'pier', model: name, explicit: false } : null;
}

/** Everything needed to call one model: the answer of resolveModel. */
export type ResolvedModel = {
  provider: ProviderId;
  model: string;
  baseUrl: string;
  apiKey: string;
  keySource: 'organization' | 'platform';
};

/** The platform's own settings for a provider, or null when the operator configured none. */
export function platformProvider(
  config: ModelsConfig,
  provider: ProviderId,
): { baseUrl: string; apiKey: string } | null {
  if (provider === 'pier')
    return config.pier ? { baseUrl: config.pier.baseUrl, apiKey: config.pier.apiKey ?? '' } : null;
  const v = config.vendors[provider];
  return v.apiKey ? { baseUrl: baseUrlOf(config, provider), apiKey: v.apiKey } : null;
}

export function baseUrlOf(config: ModelsConfig, provider: ProviderId): string {
  if (provider === 'pier') return config.pier?.baseUrl ?? '';
  return (config.vendors[provider].baseUrl ?? DEFAULT_BASE_URLS[provider]).replace(/\/+$/, '');
}

/** Resolution with platform keys only (background work that has no organization, or no org key). */
export function resolveWithPlatform(config: ModelsConfig, name: string): ResolvedModel {
  const ref = parseModelRef(name, Boolean(config.pier));
  const p = ref && platformProvider(config, ref.provider);
  if (!ref || !p) throw modelErrors.modelNotAvailable(name);
  return { provider: ref.provider, model: ref.model, ...p, keySource: 'platform' };
}

function sdkProvider(r: ResolvedModel) {
  const common = { apiKey: r.apiKey, baseURL: r.baseUrl };
  switch (r.provider) {
    case 'openai':
      return { kind: 'openai' as const, p: createOpenAI(common) };
    case 'anthropic':
      return { kind: 'anthropic' as const, p: createAnthropic(common) };
    case 'google':
      return { kind: 'google' as const, p: createGoogle(common) };
    case 'mistral':
      return { kind: 'mistral' as const, p: createMistral(common) };
    case 'pier':
      return {
        kind: 'pier' as const,
        p: createOpenAICompatible({
          name: 'pier',
          baseURL: r.baseUrl,
          apiKey: r.apiKey || undefined,
          includeUsage: true,
          // Ollama, vLLM and llama.cpp server accept response_format json_schema.
          supportsStructuredOutputs: true,
        }),
      };
  }
}

export function languageModel(r: ResolvedModel): LanguageModel {
  const s = sdkProvider(r);
  // OpenAI's chat completions, not its newer responses API: what OpenAI-compatible servers speak too.
  if (s.kind === 'openai') return s.p.chat(r.model);
  return s.p.languageModel(r.model);
}

export function embeddingModel(r: ResolvedModel): EmbeddingModel {
  const s = sdkProvider(r);
  if (s.kind === 'anthropic') throw modelErrors.modelCapabilityUnsupported(r.provider, 'embeddings');
  return s.p.embeddingModel(r.model);
}

export function imageModel(r: ResolvedModel): ImageModel {
  const s = sdkProvider(r);
  if (s.kind === 'openai' || s.kind === 'google' || s.kind === 'pier') return s.p.imageModel(r.model);
  throw modelErrors.modelCapabilityUnsupported(r.provider, 'image generation');
}

export function speechModel(r: ResolvedModel): SpeechModel {
  const s = sdkProvider(r);
  if (s.kind === 'openai' || s.kind === 'google' || s.kind === 'mistral') return s.p.speech(r.model);
  throw modelErrors.modelCapabilityUnsupported(r.provider, 'speech generation');
}

/** JSON output asked by the caller (OpenAI's `response_format`): any JSON object, or one of a schema. */
export type ResponseFormat =
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; description?: string; schema: JSONSchema7; strict?: boolean };

/**
 * The SDK options that make `r` answer in `format`, or MODEL_CAPABILITY_UNSUPPORTED where it cannot: a
 * format is never dropped. The output is the model's text unparsed, as OpenAI returns it (the SDK's
 * Output.object would validate and fail on a non-strict answer instead of passing it on).
 */
export function responseFormatOptions(r: ResolvedModel, format: ResponseFormat) {
  // The Anthropic provider ignores a JSON format without a schema (it needs one for its JSON tool).
  if (format.type === 'json_object' && r.provider === 'anthropic')
    throw modelErrors.modelCapabilityUnsupported(
      r.provider,
      'response_format json_object (send json_schema with a schema instead)',
    );
  const responseFormat =
    format.type === 'json_object'
      ? { type: 'json' as const }
      : { type: 'json' as const, schema: format.schema, name: format.name, description: format.description };
  const output: OutputInterface<string, string, never> = {
    name: 'response_format',
    responseFormat: Promise.resolve(responseFormat),
    parseCompleteOutput: async ({ text }) => text,
    parsePartialOutput: async ({ text }) => ({ partial: text }),
    createElementStreamTransform: () => undefined,
  };
  // OpenAI's default for `strict` is false; the SDK's OpenAI and OpenAI-compatible providers default to true.
  const strictJsonSchema = format.type === 'json_schema' ? (format.strict ?? false) : undefined;
  const providerOptions = {
    openai: { strictJsonSchema },
    pier: { strictJsonSchema },
    mistral: { strictJsonSchema },
  };
  return { output, providerOptions };
}

/** A provider's warning that it ignored the response format: the answer would be free text, so refuse. */
export function assertFormatHonoured(
  r: ResolvedModel,
  warnings: readonly { type: string; feature?: string }[] | undefined,
): void {
  if (warnings?.some((w) => w.type === 'unsupported' && w.feature === 'responseFormat'))
    throw modelErrors.modelCapabilityUnsupported(r.provider, `response_format with the model '${r.model}'`);
}
