import { APICallError } from 'ai';
import { describe, expect, it } from 'vitest';
import { toApiError, withoutCredentials } from './provider-errors.ts';

// A provider's error message reaches tenants, but never a fragment of the credential Pier called it with.

function callError(statusCode: number, message: string) {
  return new APICallError({
    message: 'provider said no',
    url: 'http://127.0.0.1:1/v1/chat/completions',
    requestBodyValues: {},
    statusCode,
    responseBody: JSON.stringify({ error: { message, type: 'invalid_request_error' } }),
  });
}

describe('provider error messages', () => {
  it("drops the provider's words about a refused key (OpenAI quotes part of it)", () => {
    const e = toApiError(
      callError(
        401,
        'Incorrect API key provided: sk-proj-****************************abcd. You can find your API key at https://platform.openai.com/account/api-keys.',
      ),
      'openai',
    );
    expect(e.code).toBe('MODEL_PROVIDER_REJECTED');
    expect(e.status).toBe(502);
    expect(e.message).not.toMatch(/sk-|abcd|Incorrect API key/);
    expect(e.message).toContain('refused the credentials');
  });

  it('keeps the useful part of other refusals and cuts anything shaped like a credential', () => {
    const e = toApiError(
      callError(
        400,
        "This model's maximum context length is 8192 tokens (key sk-ant-api03-AbCdEf1234567890-xyz, token=abc123SECRET, Bearer eyJhbGciOi.x.y, AIzaSyA1234567890abcdefghij, id 3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c) for gpt-4o-mini-2024-07-18",
      ),
      'openai',
    );
    expect(e.status).toBe(400);
    expect(e.message).toContain('maximum context length is 8192 tokens');
    expect(e.message).toContain('gpt-4o-mini-2024-07-18');
    for (const leak of [
      'sk-ant',
      'AbCdEf1234567890',
      'abc123SECRET',
      'eyJhbGciOi',
      'AIzaSy',
      '3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c',
    ])
      expect(e.message, leak).not.toContain(leak);
  });

  it('leaves ordinary text alone', () => {
    expect(
      withoutCredentials('Unsupported value: temperature must be at most 2 for claude-3-5-sonnet-20241022'),
    ).toBe('Unsupported value: temperature must be at most 2 for claude-3-5-sonnet-20241022');
  });
});
