import crypto from 'node:crypto';
import type { ModelMessage } from 'ai';

// Mistral refuses any tool call id but its own shape, nine letters or digits ("Tool call id was call_… but
// must be a-z, A-Z, 0-9, with a length of 9"), and the AI SDK passes ids through as they are. A conversation
// whose calls came from another model (OpenAI's call_…, Anthropic's toolu_…, a fallback from one of them,
// an agent framework's own ids) would then fail on Mistral alone. Each other id is rewritten to nine
// characters derived from it, so a call and its result still match; Mistral's own ids pass unchanged, and
// the caller's ids are never changed in what it gets back (only Mistral sees the rewritten ones).

const MISTRAL_ID = /^[a-zA-Z0-9]{9}$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function mistralToolCallId(id: string): string {
  if (MISTRAL_ID.test(id)) return id;
  const hash = crypto.createHash('sha256').update(id).digest();
  let out = '';
  for (let i = 0; i < 9; i++) out += ALPHABET[hash[i]! % ALPHABET.length];
  return out;
}

export function withMistralToolCallIds(messages: ModelMessage[]): ModelMessage[] {
  return messages.map((m): ModelMessage => {
    if (m.role === 'assistant' && Array.isArray(m.content))
      return {
        ...m,
        content: m.content.map((p) =>
          p.type === 'tool-call' || p.type === 'tool-result'
            ? { ...p, toolCallId: mistralToolCallId(p.toolCallId) }
            : p,
        ),
      };
    if (m.role === 'tool')
      return {
        ...m,
        content: m.content.map((p) =>
          p.type === 'tool-result' ? { ...p, toolCallId: mistralToolCallId(p.toolCallId) } : p,
        ),
      };
    return m;
  });
}
