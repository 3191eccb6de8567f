import type { FakeServer } from './fake-server.ts';
import { startFake } from './fake-server.ts';
import { openaiHandler } from './openai-server.ts';

// Mistral's API speaks the chat-completions and embeddings shapes at /v1 (bearer key), like OpenAI's.
export function startMistralServer(): Promise<FakeServer> {
  return startFake(openaiHandler('mistral'));
}
