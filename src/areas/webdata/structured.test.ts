import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeServer } from '../../../test/fakes/fake-server.ts';
import { startOpenAIServer } from '../../../test/fakes/openai-server.ts';
import { loadConfig } from '../../config.ts';
import { createModels } from '../../core/ai/models.ts';
import type { Deps } from '../../deps.ts';
import { PageFailure } from './fetch-page.ts';
import { extractStructured } from './structured.ts';

// Schema mode through a model (a fake OpenAI server on 127.0.0.1 answering structured output with sample
// values): a valid answer is returned as `model` with its tokens; an answer that breaks the schema is asked
// for once more and then fails with ajv's reason. No database.

describe('structured extraction through TEXT_MODEL', () => {
  let openai: FakeServer;
  let deps: Deps;

  beforeAll(async () => {
    openai = await startOpenAIServer();
    const config = loadConfig({
      DATA_DIR: '/tmp/pier-structured-test',
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      TEXT_MODEL: 'openai/gpt-4o-mini',
      MODEL_MAX_RETRIES: '0',
    });
    deps = { config, models: createModels(config.models) } as unknown as Deps;
  });
  afterAll(() => openai?.close());

  const page = { html: '<h1>Oak Chair</h1>', markdown: '# Oak Chair\n\nPrice 149 EUR' };

  it('returns the model answer when it matches the schema', async () => {
    const before = openai.requests.length;
    const res = await extractStructured(deps, {
      ...page,
      schema: { type: 'object', properties: { name: { type: 'string' }, price: { type: 'number' } } },
    });
    expect(res.extractedBy).toBe('model');
    expect(typeof res.data.name).toBe('string');
    expect(typeof res.data.price).toBe('number');
    expect(res.tokens).toBeGreaterThan(0);
    expect(openai.requests.length - before).toBe(1);
  });

  it('retries once on a mismatch, then fails with the validation errors', async () => {
    const before = openai.requests.length;
    const err = await extractStructured(deps, {
      ...page,
      schema: {
        type: 'object',
        properties: { code: { type: 'string', maxLength: 3 } },
        required: ['code'],
      },
    }).catch((e) => e);
    expect(err).toBeInstanceOf(PageFailure);
    expect(err.message).toMatch(/did not match the schema twice: .*code.*3 characters/);
    expect(openai.requests.length - before).toBe(2);
  });
});
