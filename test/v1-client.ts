import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from './harness.ts';

// A tiny v1 client over TestApp.v1 for tests: api.post('/memory/agents', body) with the key as bearer.
export type V1Client = {
  get(path: string, query?: Record<string, string | number>): Promise<LightMyRequestResponse>;
  post(path: string, body?: unknown): Promise<LightMyRequestResponse>;
  patch(path: string, body: unknown): Promise<LightMyRequestResponse>;
  del(path: string, body?: unknown): Promise<LightMyRequestResponse>;
};

export function v1Client(t: TestApp, key?: string): V1Client {
  return {
    get: (path, query) => {
      const qs = query
        ? `?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))}`
        : '';
      return t.v1('GET', `${path}${qs}`, key);
    },
    post: (path, body) => t.v1('POST', path, key, body ?? {}),
    patch: (path, body) => t.v1('PATCH', path, key, body),
    del: (path, body) => t.v1('DELETE', path, key, body),
  };
}
