import { z } from 'zod';
import { errors } from '../../core/errors.ts';
import { type ChatBody, type ChatMessage, toolName, type UserPart } from './chat-schema.ts';

// OpenAI's Responses API (POST /v1/ai/responses), its stateless core: input items, instructions, function
// tools, text formats. A request is rewritten as a chat completion request (toChatBody), so every provider,
// fallback and check of chat completions applies unchanged. What is left out: docs/decisions/099-….

const inputText = z.object({ type: z.literal('input_text'), text: z.string() });
const outputText = z.object({ type: z.literal('output_text'), text: z.string() });
const inputImage = z.object({
  type: z.literal('input_image'),
  image_url: z.string().min(1).describe('A data: URL or an http(s) URL (fetched through the SSRF guard)'),
  detail: z.enum(['auto', 'low', 'high']).optional(),
});
const refusal = z.object({ type: z.literal('refusal'), refusal: z.string() });

const messageItem = z.object({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([
    z.string(),
    z.array(z.discriminatedUnion('type', [inputText, outputText, inputImage, refusal])),
  ]),
});
const functionCallItem = z.object({
  type: z.literal('function_call'),
  call_id: z.string().min(1).max(200),
  name: toolName,
  arguments: z.string(),
});
const functionCallOutputItem = z.object({
  type: z.literal('function_call_output'),
  call_id: z.string().min(1).max(200),
  output: z.union([z.string(), z.array(inputText)]),
});
const inputItem = z.union([messageItem, functionCallItem, functionCallOutputItem]);
type InputItem = z.infer<typeof inputItem>;

const formatSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({
    type: z.literal('json_schema'),
    name: toolName,
    description: z.string().max(10_000).optional(),
    schema: z.record(z.string(), z.unknown()),
    strict: z.boolean().nullish(),
  }),
]);

export const responsesBody = z.object({
  model: z.string().min(1).max(200),
  models: z.array(z.string().min(1).max(200)).max(8).optional().describe('Fallbacks, as in chat completions'),
  input: z.union([z.string(), z.array(inputItem).min(1).max(1000)]),
  instructions: z.string().nullish(),
  tools: z
    .array(
      z.object({
        type: z.string(),
        name: toolName.optional(),
        description: z.string().max(10_000).nullish(),
        parameters: z.record(z.string(), z.unknown()).nullish(),
        strict: z.boolean().nullish(),
      }),
    )
    .max(128)
    .optional()
    .describe('Function tools only (`type: "function"`); built-in tools are refused with 400'),
  tool_choice: z
    .union([z.enum(['none', 'auto', 'required']), z.object({ type: z.literal('function'), name: toolName })])
    .nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  text: z.object({ format: formatSchema.optional() }).nullish(),
  max_output_tokens: z.number().int().positive().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  stream: z.boolean().optional(),
  store: z.boolean().nullish().describe('Responses are never stored; `true` is accepted and has no effect'),
  previous_response_id: z
    .null()
    .optional()
    .describe('Not supported: Pier keeps no responses, so send the whole conversation as `input`'),
  metadata: z.record(z.string(), z.string()).nullish(),
  user: z.string().optional(),
});
export type ResponsesBody = z.infer<typeof responsesBody>;

const text = (c: string | { text: string }[]) => (typeof c === 'string' ? c : c.map((p) => p.text).join(''));

function messageOf(m: z.infer<typeof messageItem>, i: number): ChatMessage {
  const parts =
    typeof m.content === 'string' ? [{ type: 'input_text' as const, text: m.content }] : m.content;
  const plain = parts
    .map((p) => (p.type === 'refusal' ? p.refusal : p.type === 'input_image' ? '' : p.text))
    .join('');
  if (m.role === 'user') {
    const content: UserPart[] = parts.map((p) =>
      p.type === 'input_image'
        ? { type: 'image_url', image_url: { url: p.image_url, detail: p.detail } }
        : { type: 'text', text: p.type === 'refusal' ? p.refusal : p.text },
    );
    return { role: 'user', content };
  }
  if (parts.some((p) => p.type === 'input_image'))
    throw errors.validation(`input.${i}: only user messages carry images.`);
  return { role: m.role, content: plain };
}

function messagesOf(items: InputItem[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const [i, item] of items.entries()) {
    if (item.type === 'function_call') {
      const call = {
        id: item.call_id,
        type: 'function' as const,
        function: { name: item.name, arguments: item.arguments },
      };
      // Consecutive calls of one turn belong to one assistant message, as in chat completions.
      const last = out.at(-1);
      if (last?.role === 'assistant') last.tool_calls = [...(last.tool_calls ?? []), call];
      else out.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (item.type === 'function_call_output')
      out.push({ role: 'tool', tool_call_id: item.call_id, content: text(item.output) });
    else out.push(messageOf(item, i));
  }
  return out;
}

/** The Responses request as the chat completions request it means. */
export function toChatBody(b: ResponsesBody): ChatBody {
  const tools = b.tools?.map((t, i) => {
    if (t.type !== 'function' || !t.name)
      throw errors.validation(
        `tools.${i}: only function tools (type 'function' with a name) are supported, not '${t.type}'.`,
      );
    return {
      type: 'function' as const,
      function: {
        name: t.name,
        description: t.description ?? undefined,
        parameters: t.parameters ?? undefined,
        strict: t.strict,
      },
    };
  });
  const f = b.text?.format;
  const messages: ChatMessage[] = [
    ...(b.instructions ? [{ role: 'system' as const, content: b.instructions }] : []),
    ...(typeof b.input === 'string' ? [{ role: 'user' as const, content: b.input }] : messagesOf(b.input)),
  ];
  return {
    model: b.model,
    models: b.models,
    messages,
    tools,
    tool_choice:
      b.tool_choice == null || typeof b.tool_choice === 'string'
        ? b.tool_choice
        : { type: 'function', function: { name: b.tool_choice.name } },
    parallel_tool_calls: b.parallel_tool_calls,
    response_format:
      f?.type === 'json_schema'
        ? {
            type: 'json_schema',
            json_schema: { name: f.name, description: f.description, schema: f.schema, strict: f.strict },
          }
        : f,
    max_completion_tokens: b.max_output_tokens,
    temperature: b.temperature,
    top_p: b.top_p,
    stream: b.stream,
  };
}
