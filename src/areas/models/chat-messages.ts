import type { AssistantContent, JSONSchema7, ModelMessage, UserContent } from 'ai';
import type { TextRequest } from '../../core/ai/models.ts';
import type { ResponseFormat } from '../../core/ai/providers.ts';
import type { FunctionToolSpec, ToolChoiceSpec } from '../../core/ai/tool-options.ts';
import { errors } from '../../core/errors.ts';
import type { OutboundAllow } from '../../core/net/outbound-allow.ts';
import type { ChatBody, ChatMessage, UserPart } from './chat-schema.ts';
import { loadAudio, loadImage } from './proxy-media.ts';

// OpenAI's messages, tools and formats into the AI SDK's, whatever provider serves the model; the SDK
// writes each provider's own (Anthropic's tool_use/tool_result blocks, Google's functionCall parts).

type Text = string | { text: string }[] | null | undefined;
const textOf = (c: Text) => (typeof c === 'string' ? c : (c ?? []).map((p) => p.text).join(''));

/** What a request's messages become; `hasAudio` so the provider check can name what it cannot take. */
export type Conversation = { system?: string; messages: ModelMessage[]; hasAudio: boolean };

export async function toConversation(messages: ChatMessage[], allow: OutboundAllow): Promise<Conversation> {
  const system: string[] = [];
  const out: ModelMessage[] = [];
  // A tool message names only its call's id; the SDK (and Anthropic, Google) also need the tool's name.
  const callNames = new Map<string, string>();
  let hasAudio = false;
  for (const [i, m] of messages.entries()) {
    const where = `messages.${i}`;
    if (m.role === 'system' || m.role === 'developer') system.push(textOf(m.content));
    else if (m.role === 'user') {
      if (typeof m.content === 'string') out.push({ role: 'user', content: m.content });
      else {
        hasAudio ||= m.content.some((p) => p.type === 'input_audio');
        out.push({ role: 'user', content: await userContent(m.content, `${where}.content`, allow) });
      }
    } else if (m.role === 'assistant') {
      const content: Exclude<AssistantContent, string> = [];
      const text = textOf(m.content);
      if (text) content.push({ type: 'text', text });
      for (const c of m.tool_calls ?? []) {
        callNames.set(c.id, c.function.name);
        content.push({ type: 'tool-call', toolCallId: c.id, toolName: c.function.name, input: parseArgs(c) });
      }
      out.push({ role: 'assistant', content });
    } else {
      const toolName = callNames.get(m.tool_call_id);
      if (!toolName)
        throw errors.validation(
          `${where}.tool_call_id: '${m.tool_call_id.slice(0, 80)}' answers no tool call of an earlier assistant message.`,
        );
      const value = textOf(m.content);
      out.push({
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: m.tool_call_id, toolName, output: { type: 'text', value } },
        ],
      });
    }
  }
  if (out.length === 0)
    throw errors.validation('messages: at least one user or assistant message is needed.');
  return { system: system.length ? system.join('\n\n') : undefined, messages: out, hasAudio };
}

// Arguments a model wrote are usually JSON; ones that are not travel on as the string they are.
function parseArgs(c: { function: { arguments: string } }): unknown {
  try {
    return JSON.parse(c.function.arguments || '{}');
  } catch {
    return c.function.arguments;
  }
}

async function userContent(parts: UserPart[], where: string, allow: OutboundAllow): Promise<UserContent> {
  return Promise.all(
    parts.map(async (p, j): Promise<Exclude<UserContent, string>[number]> => {
      if (p.type === 'text') return { type: 'text', text: p.text };
      if (p.type === 'image_url') {
        const img = await loadImage(p.image_url.url, `${where}.${j}.image_url`, allow);
        return { type: 'image', image: img.data, mediaType: img.mediaType };
      }
      const a = loadAudio(p.input_audio.data, p.input_audio.format, `${where}.${j}.input_audio`);
      return { type: 'file', data: a.data, mediaType: a.mediaType };
    }),
  );
}

/** The request's tools, checked against its tool_choice (a named tool must be among them). */
export function toolsOf(body: Pick<ChatBody, 'tools' | 'tool_choice'>): {
  tools?: FunctionToolSpec[];
  toolChoice?: ToolChoiceSpec;
} {
  const tools = body.tools?.map((t) => ({
    name: t.function.name,
    description: t.function.description,
    parameters: t.function.parameters as JSONSchema7 | undefined,
    strict: t.function.strict ?? undefined,
  }));
  const names = new Set(tools?.map((t) => t.name));
  if (names.size !== (tools?.length ?? 0)) throw errors.validation('tools: two tools have the same name.');
  const c = body.tool_choice;
  if (c == null) return { tools };
  if (typeof c === 'string') {
    if (c === 'required' && !tools?.length) throw errors.validation("tool_choice: 'required' needs tools.");
    return { tools, toolChoice: c };
  }
  if (!names.has(c.function.name))
    throw errors.validation(`tool_choice: no tool is named '${c.function.name}'.`);
  return { tools, toolChoice: { name: c.function.name } };
}

export function responseFormatOf(f: ChatBody['response_format']): ResponseFormat | undefined {
  if (!f || f.type === 'text') return undefined;
  if (f.type === 'json_object') return { type: 'json_object' };
  const { name, description, schema, strict } = f.json_schema;
  return {
    type: 'json_schema',
    name,
    description,
    schema: schema as JSONSchema7,
    strict: strict ?? undefined,
  };
}

/** The request for the AI SDK, without the model (each fallback adds its own). */
export function toTextRequest(body: ChatBody, conv: Conversation): Omit<TextRequest, 'resolved'> {
  return {
    system: conv.system,
    messages: conv.messages,
    temperature: body.temperature ?? undefined,
    topP: body.top_p ?? undefined,
    maxOutputTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
    stopSequences: body.stop == null ? undefined : Array.isArray(body.stop) ? body.stop : [body.stop],
    responseFormat: responseFormatOf(body.response_format),
    ...toolsOf(body),
    parallelToolCalls: body.parallel_tool_calls ?? undefined,
  };
}
