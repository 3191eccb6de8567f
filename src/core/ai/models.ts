import {
  embedMany,
  type JSONValue,
  jsonSchema,
  type ModelMessage,
  Output,
  generateImage as sdkGenerateImage,
  generateSpeech as sdkGenerateSpeech,
  generateText as sdkGenerateText,
  streamText as sdkStreamText,
} from 'ai';
import type { ModelsConfig } from '../../config.ts';
import { modelErrors } from './errors.ts';
import { EXTRACTIVE_SUMMARY_MODEL, type SummaryOptions, summarizeExtractive } from './extractive-summary.ts';
import { extractHeuristic, HEURISTIC_EXTRACT_MODEL, type JsonSchema } from './heuristic-extract.ts';
import {
  embedLocalMany,
  LOCAL_EMBEDDER_DIMENSION,
  localEmbedderModelId,
  parseLocalEmbedderId,
} from './local-embedder.ts';
import { withMistralToolCallIds } from './mistral-ids.ts';
import { isProviderFailure, isRetryable, retryDelayMs, toApiError, withRetry } from './provider-errors.ts';
import {
  assertFormatHonoured,
  embeddingModel,
  imageModel,
  languageModel,
  type ResolvedModel,
  type ResponseFormat,
  resolveWithPlatform,
  responseFormatOptions,
  speechModel,
} from './providers.ts';
import { argsOf, type ToolCallOut, type ToolRequest, toolOptions } from './tool-options.ts';

// The one door to models for every area: text, streaming, structured output, embeddings, images, speech,
// and the deterministic fallbacks. Pass `resolved` (an organization's answer from resolveModel) to use its
// key; otherwise the platform's keys from config are used. Every result names the model that produced it.

// The SDK's own warnings go to the console; Pier logs through pino, and a model choice is the caller's.
globalThis.AI_SDK_LOG_WARNINGS = false;

export type Usage = { promptTokens: number; completionTokens: number; totalTokens: number };

export type TextRequest = ToolRequest & {
  /** `provider/model` or a bare name from the family table; ignored when `resolved` is given. */
  model?: string;
  resolved?: ResolvedModel;
  system?: string;
  prompt?: string;
  messages?: ModelMessage[];
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  stopSequences?: string[];
  /** JSON output (OpenAI's `response_format`); refused where the provider cannot, never dropped. */
  responseFormat?: ResponseFormat;
  abortSignal?: AbortSignal;
};

export type StreamEvent =
  | { type: 'text'; text: string }
  /** A tool call begins; its arguments follow as `tool-args` pieces with the same id. */
  | { type: 'tool-start'; id: string; name: string }
  | { type: 'tool-args'; id: string; args: string }
  | { type: 'finish'; finishReason: string; usage: Usage };

// Texts per embedMany call: a memory batch (at most 100) is one provider request. The SDK splits further
// where a provider's maximum is lower (Mistral: 32).
const EMBED_BATCH = 128;

function usageOf(
  u: { inputTokens?: number; outputTokens?: number; totalTokens?: number } | undefined,
): Usage {
  const promptTokens = u?.inputTokens ?? 0;
  const completionTokens = u?.outputTokens ?? 0;
  return { promptTokens, completionTokens, totalTokens: u?.totalTokens ?? promptTokens + completionTokens };
}

export const modelName = (r: Pick<ResolvedModel, 'provider' | 'model'>) => `${r.provider}/${r.model}`;

export type Models = ReturnType<typeof createModels>;

/** What every call shares: the configuration, model resolution, retries and the common SDK options. */
type CallContext = {
  config: ModelsConfig;
  target(req: { model?: string; resolved?: ResolvedModel }, fallback?: string): ResolvedModel;
  retry<T>(r: ResolvedModel, fn: () => Promise<T>): Promise<T>;
};

function callContext(config: ModelsConfig): CallContext {
  return {
    config,
    target: (req, fallback) => {
      if (req.resolved) return req.resolved;
      const name = req.model ?? fallback;
      if (!name) throw modelErrors.invalidModel('Name a model.');
      return resolveWithPlatform(config, name);
    },
    retry: (r, fn) =>
      withRetry(fn, { retries: config.maxRetries, baseMs: config.retryBaseMs, provider: r.provider }),
  };
}

function commonOptions(ctx: CallContext, req: TextRequest, r: ResolvedModel) {
  const format = req.responseFormat ? responseFormatOptions(r, req.responseFormat) : undefined;
  const tools = toolOptions(req, r);
  const providerOptions: Record<string, Record<string, JSONValue | undefined>> = {};
  for (const opts of [format?.providerOptions, tools.providerOptions])
    for (const [k, v] of Object.entries(opts ?? {})) providerOptions[k] = { ...providerOptions[k], ...v };
  const base = {
    output: format?.output,
    tools: tools.tools,
    toolChoice: tools.toolChoice,
    providerOptions: providerOptions as Parameters<typeof sdkGenerateText>[0]['providerOptions'],
    system: req.system,
    maxOutputTokens: req.maxOutputTokens,
    temperature: req.temperature,
    topP: req.topP,
    stopSequences: req.stopSequences,
    maxRetries: 0,
    abortSignal: req.abortSignal ?? AbortSignal.timeout(ctx.config.timeoutMs),
  };
  if (req.messages)
    return {
      ...base,
      messages: r.provider === 'mistral' ? withMistralToolCallIds(req.messages) : req.messages,
    };
  return { ...base, prompt: req.prompt ?? '' };
}

/** The model calls every area uses (deps.models), each a function of the shared call context below. */
export function createModels(config: ModelsConfig) {
  const ctx = callContext(config);
  return {
    config,
    resolve: (name: string) => resolveWithPlatform(config, name),
    generateText: (req: TextRequest) => generateText(ctx, req),
    streamText: (req: TextRequest) => streamText(ctx, req),
    generateObject: (req: ObjectRequest) => generateObject(ctx, req),
    embed: (texts: string[], opts?: EmbedOptions) => embed(ctx, texts, opts),
    summarize: (texts: string[], opts?: SummaryOptions & ModelChoice) => summarize(ctx, texts, opts),
    extract: (html: string, schema: JsonSchema, opts?: ExtractOptions) => extract(ctx, html, schema, opts),
    generateImage: (req: ImageRequest) => generateImage(ctx, req),
    generateSpeech: (req: SpeechRequest) => generateSpeech(ctx, req),
    /** The embedder id and dimension this installation uses now (for recording and change detection). */
    embedderId: () => config.embeddingModel ?? localEmbedderModelId(),
    defaultLocalDimension: LOCAL_EMBEDDER_DIMENSION,
  };
}

type ModelChoice = { model?: string; resolved?: ResolvedModel };
type ObjectRequest = TextRequest & { schema: JsonSchema; schemaName?: string };
type EmbedOptions = ModelChoice & { timeoutMs?: number };
type ExtractOptions = ModelChoice & { instructions?: string };
type ImageRequest = ModelChoice & { prompt: string; n?: number; size?: `${number}x${number}` };
type SpeechRequest = ModelChoice & { text: string; voice?: string };

async function generateText(ctx: CallContext, req: TextRequest) {
  const r = ctx.target(req);
  const res = await ctx.retry(r, () =>
    sdkGenerateText({ model: languageModel(r), ...commonOptions(ctx, req, r) }),
  );
  if (req.responseFormat) assertFormatHonoured(r, res.warnings);
  const toolCalls: ToolCallOut[] = res.toolCalls.map((c) => ({
    id: c.toolCallId,
    name: c.toolName,
    args: argsOf(c.input),
  }));
  return {
    text: res.text,
    toolCalls,
    finishReason: String(res.finishReason),
    usage: usageOf(res.usage),
    model: modelName(r),
  };
}

/** Streams text deltas, then one finish event. Retries only before the first delta reached the caller. */
function streamText(
  ctx: CallContext,
  req: TextRequest,
): { model: string; events: AsyncGenerator<StreamEvent> } {
  const { config } = ctx;
  const r = ctx.target(req);
  async function* events(): AsyncGenerator<StreamEvent> {
    for (let attempt = 1; ; attempt++) {
      let emitted = false;
      try {
        const res = sdkStreamText({
          model: languageModel(r),
          ...commonOptions(ctx, req, r),
          onError: () => {},
        });
        // Providers that stream a call's arguments (OpenAI, Anthropic) send its input pieces first; those
        // that send a call whole (Google) only its tool-call part.
        const started = new Set<string>();
        for await (const part of res.fullStream) {
          // Before the first delta, so a refusal is still a clean error reply.
          if (part.type === 'start-step' && req.responseFormat) assertFormatHonoured(r, part.warnings);
          if (part.type === 'text-delta') {
            emitted = true;
            yield { type: 'text', text: part.text };
          } else if (part.type === 'tool-input-start') {
            emitted = true;
            started.add(part.id);
            yield { type: 'tool-start', id: part.id, name: part.toolName };
          } else if (part.type === 'tool-input-delta') {
            yield { type: 'tool-args', id: part.id, args: part.delta };
          } else if (part.type === 'tool-call' && !started.has(part.toolCallId)) {
            emitted = true;
            yield { type: 'tool-start', id: part.toolCallId, name: part.toolName };
            yield { type: 'tool-args', id: part.toolCallId, args: argsOf(part.input) };
          } else if (part.type === 'error') throw part.error;
          else if (part.type === 'finish')
            yield {
              type: 'finish',
              finishReason: String(part.finishReason),
              usage: usageOf(part.totalUsage),
            };
        }
        return;
      } catch (err) {
        if (!isProviderFailure(err)) throw err;
        if (emitted || attempt > config.maxRetries || !isRetryable(err)) throw toApiError(err, r.provider);
        await new Promise((ok) => setTimeout(ok, retryDelayMs(err, attempt, config.retryBaseMs)));
      }
    }
  }
  return { model: modelName(r), events: events() };
}

async function generateObject(ctx: CallContext, req: ObjectRequest) {
  const r = ctx.target(req);
  const res = await ctx.retry(r, () =>
    sdkGenerateText({
      model: languageModel(r),
      ...commonOptions(ctx, req, r),
      output: Output.object({ schema: jsonSchema(req.schema as never), name: req.schemaName }),
    }),
  );
  return { object: res.output as unknown, usage: usageOf(res.usage), model: modelName(r) };
}

/**
 * Embeds texts in batches through EMBEDDING_MODEL (or `opts.model` / `opts.resolved`); with none
 * configured, through the built-in local embedder. `model` is the id to store beside each vector.
 */
async function embed(
  ctx: CallContext,
  texts: string[],
  opts: EmbedOptions = {},
): Promise<{ vectors: number[][]; model: string; dimension: number; usage: { tokens: number } }> {
  const { config } = ctx;
  const name = opts.resolved ? undefined : (opts.model ?? config.embeddingModel ?? localEmbedderModelId());
  const local = name ? parseLocalEmbedderId(name) : null;
  if (name?.startsWith('pier-local/') && !local)
    throw modelErrors.invalidModel(`Unknown local embedder '${name}'.`);
  if (local) {
    return {
      vectors: embedLocalMany(texts, local.dimension),
      model: name!,
      dimension: local.dimension,
      usage: { tokens: 0 },
    };
  }
  const r = ctx.target({ model: name, resolved: opts.resolved });
  const m = embeddingModel(r);
  const vectors: number[][] = [];
  let tokens = 0;
  for (let i = 0; i < texts.length; i += EMBED_BATCH) {
    const values = texts.slice(i, i + EMBED_BATCH);
    const res = await ctx.retry(r, () =>
      embedMany({
        model: m,
        values,
        maxRetries: 0,
        abortSignal: AbortSignal.timeout(opts.timeoutMs ?? config.timeoutMs),
      }),
    );
    vectors.push(...res.embeddings);
    tokens += res.usage?.tokens ?? 0;
  }
  const dimension = vectors[0]?.length ?? 0;
  if (vectors.some((v) => v.length !== dimension))
    throw modelErrors.modelProviderError(r.provider, undefined);
  return { vectors, model: modelName(r), dimension, usage: { tokens } };
}

/** Summarises with TEXT_MODEL (or `opts.model`), else extractively; `model` says which did it. */
async function summarize(
  ctx: CallContext,
  texts: string[],
  opts: SummaryOptions & ModelChoice = {},
): Promise<{ text: string; model: string }> {
  const { config } = ctx;
  if (!opts.resolved && !opts.model && !config.textModel)
    return { text: summarizeExtractive(texts, opts), model: EXTRACTIVE_SUMMARY_MODEL };
  const res = await generateText(ctx, {
    model: opts.model ?? config.textModel,
    resolved: opts.resolved,
    system:
      'Summarise the notes faithfully and concisely. Keep names, numbers, dates and decisions. ' +
      'Do not add facts that are not in the notes.',
    prompt: texts.map((t, i) => `[${i + 1}] ${t}`).join('\n\n'),
    maxOutputTokens: Math.ceil((opts.maxChars ?? 1200) / 3),
  });
  return { text: res.text.trim(), model: res.model };
}

/** Extracts data matching a JSON schema from a page with TEXT_MODEL (or `opts.model`), else heuristically. */
async function extract(
  ctx: CallContext,
  html: string,
  schema: JsonSchema,
  opts: ExtractOptions = {},
): Promise<{ data: Record<string, unknown>; model: string }> {
  const { config } = ctx;
  if (!opts.resolved && !opts.model && !config.textModel)
    return { data: extractHeuristic(html, schema), model: HEURISTIC_EXTRACT_MODEL };
  const res = await generateObject(ctx, {
    model: opts.model ?? config.textModel,
    resolved: opts.resolved,
    schema,
    system: `Extract the requested fields from the web page. ${opts.instructions ?? ''}`.trim(),
    prompt: html.slice(0, 200_000),
  });
  return { data: res.object as Record<string, unknown>, model: res.model };
}

async function generateImage(ctx: CallContext, req: ImageRequest) {
  const r = ctx.target(req);
  const res = await ctx.retry(r, () =>
    sdkGenerateImage({
      model: imageModel(r),
      prompt: req.prompt,
      n: req.n ?? 1,
      size: req.size,
      maxRetries: 0,
    }),
  );
  return {
    images: res.images.map((i) => ({ base64: i.base64, mediaType: i.mediaType })),
    model: modelName(r),
  };
}

async function generateSpeech(ctx: CallContext, req: SpeechRequest) {
  const r = ctx.target(req);
  const res = await ctx.retry(r, () =>
    sdkGenerateSpeech({ model: speechModel(r), text: req.text, voice: req.voice, maxRetries: 0 }),
  );
  return { audio: { base64: res.audio.base64, mediaType: res.audio.mediaType }, model: modelName(r) };
}
