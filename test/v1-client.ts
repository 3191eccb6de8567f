import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from './harness.ts';

// A tiny v1 client for tests: api.post('/memory/agents', body) with the key as bearer.
export type V1Client = {
  get(path: string, query?: Record<string, string | number>): Promise<LightMyRequestResponse>;
  post(path: string, body?: unknown): Promise<LightMyRequestResponse>;
  patch(path: string, body: unknown): Promise<LightMyRequestResponse>;
  del(path: string, body?: unknown): Promise<LightMyRequestResponse>;
};

export function v1Client(t: TestApp, token?: string): V1Client {
  const headers = (hasBody: boolean) => ({
    ...(hasBody ? { 'content-type': 'application/json' } : {}),
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  });
  return {
    get: (path, query) =>
      t.app.inject({
        method: 'GET',
        url: `/v1${path}`,
        query: query ? Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])) : undefined,
        headers: headers(false),
      }),
    post: (path, body) =>
      t.app.inject({
        method: 'POST',
        url: `/v1${path}`,
        headers: headers(true),
        payload: JSON.stringify(body ?? {}),
      }),
    patch: (path, body) =>
      t.app.inject({
        method: 'PATCH',
        url: `/v1${path}`,
        headers: headers(true),
        payload: JSON.stringify(body),
      }),
    del: (path, body) =>
      t.app.inject({
        method: 'DELETE',
        url: `/v1${path}`,
        headers: headers(body !== undefined),
        payload: body === undefined ? undefined : JSON.stringify(body),
      }),
  };
}
