import { z } from 'zod';

// OpenAI's chat completions wire format (request and answer), as the proxy accepts and sends it.

/** A tool's or function's name, as OpenAI (and the MCP clients in use) accept it. */
export const toolName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and -, at most 64');

const textPart = z.object({ type: z.literal('text'), text: z.string() });
const imagePart = z.object({
  type: z.literal('image_url'),
  image_url: z.object({
    url: z.string().min(1).describe('A data: URL, or an http(s) URL Pier fetches through its SSRF guard'),
    detail: z.enum(['auto', 'low', 'high']).optional(),
  }),
});
const audioPart = z.object({
  type: z.literal('input_audio'),
  input_audio: z.object({ data: z.string().min(1).describe('base64'), format: z.enum(['wav', 'mp3']) }),
});
export const userPart = z.discriminatedUnion('type', [textPart, imagePart, audioPart]);
export type UserPart = z.infer<typeof userPart>;

const textContent = z.union([z.string(), z.array(textPart)]);

export const toolCall = z.object({
  id: z.string().min(1).max(200),
  type: z.literal('function'),
  function: z.object({ name: toolName, arguments: z.string() }),
});

const message = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: textContent, name: z.string().optional() }),
  z.object({ role: z.literal('developer'), content: textContent, name: z.string().optional() }),
  z.object({
    role: z.literal('user'),
    content: z.union([z.string(), z.array(userPart)]),
    name: z.string().optional(),
  }),
  z.object({
    role: z.literal('assistant'),
    content: textContent.nullish(),
    name: z.string().optional(),
    refusal: z.string().nullish(),
    tool_calls: z.array(toolCall).max(128).nullish(),
  }),
  z.object({
    role: z.literal('tool'),
    content: textContent,
    tool_call_id: z.string().min(1).max(200).describe('The id of the assistant tool call this answers'),
  }),
]);
export type ChatMessage = z.infer<typeof message>;

export const functionTool = z.object({
  type: z.literal('function'),
  function: z.object({
    name: toolName,
    description: z.string().max(10_000).optional(),
    parameters: z.record(z.string(), z.unknown()).optional().describe('A JSON schema of the arguments'),
    strict: z.boolean().nullish(),
  }),
});

export const responseFormat = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('text') }),
    z.object({ type: z.literal('json_object') }),
    z.object({
      type: z.literal('json_schema'),
      json_schema: z.object({
        name: toolName,
        description: z.string().max(10_000).optional(),
        schema: z.record(z.string(), z.unknown()).describe('A JSON schema'),
        strict: z.boolean().nullish(),
      }),
    }),
  ])
  .nullish()
  .describe(
    'JSON output. Passed to the provider (natively, or through the AI SDK for Anthropic and Google); ' +
      'where the provider cannot honour it, 400 MODEL_CAPABILITY_UNSUPPORTED — never ignored.',
  );

export const chatBody = z.object({
  model: z.string().min(1).max(200),
  models: z
    .array(z.string().min(1).max(200))
    .max(8)
    .optional()
    .describe(
      'Fallbacks (as OpenRouter): tried in order after `model` when a provider fails (5xx, unreachable) or ' +
        'rate limits (429); the answer’s `model` and the `x-pier-model` header name the one that answered.',
    ),
  messages: z.array(message).min(1).max(1000),
  stream: z.boolean().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  max_tokens: z.number().int().positive().nullish(),
  max_completion_tokens: z.number().int().positive().nullish(),
  stop: z.union([z.string(), z.array(z.string()).max(4)]).nullish(),
  n: z.literal(1).nullish(),
  response_format: responseFormat,
  tools: z.array(functionTool).max(128).optional(),
  tool_choice: z
    .union([
      z.enum(['none', 'auto', 'required']),
      z.object({ type: z.literal('function'), function: z.object({ name: toolName }) }),
    ])
    .nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  user: z.string().optional(),
});
export type ChatBody = z.infer<typeof chatBody>;

export const usageSchema = z.object({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
});

export const chatCompletionSchema = z
  .object({
    id: z.string(),
    object: z.literal('chat.completion'),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        message: z.object({
          role: z.literal('assistant'),
          content: z.string().nullable(),
          refusal: z.null(),
          tool_calls: z.array(toolCall).optional(),
        }),
        logprobs: z.null(),
        finish_reason: z.enum(['stop', 'length', 'content_filter', 'tool_calls']),
      }),
    ),
    usage: usageSchema,
  })
  .describe('A chat completion (OpenAI format)');

export const chatSseSchema = z
  .string()
  .describe(
    'With `stream: true`: server-sent events, each `data: <chat.completion.chunk JSON>`; the last is ' +
      '`data: [DONE]`, or `data: {"error":{"code","message"}}` if the provider fails mid-stream.',
  );
