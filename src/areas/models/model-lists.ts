import crypto from 'node:crypto';
import type { ResolvedModel } from '../../core/ai/providers.ts';

// What a provider lists (GET /models in its own protocol) for one key: read by GET /v1/ai/models and by
// checks that want to know whether a provider offers a model (workflow definitions) without a call to it.

const LIST_TIMEOUT_MS = 10_000;
/** A definition check waits this long for a list, then cannot tell (and accepts). */
const CHECK_TIMEOUT_MS = 5000;
const CHECK_TTL_MS = 60_000;

export type Upstream = { id: string; created?: number };

/** One provider's list for one key, in its own protocol. */
export async function fetchList(r: ResolvedModel, timeoutMs = LIST_TIMEOUT_MS): Promise<Upstream[]> {
  const signal = AbortSignal.timeout(timeoutMs);
  const get = async (url: string, headers: Record<string, string>) => {
    const res = await fetch(url, { headers, signal });
    if (!res.ok) throw new Error(`${r.provider} GET /models answered ${res.status}`);
    return (await res.json()) as Record<string, unknown>;
  };
  if (r.provider === 'anthropic') {
    const body = await get(`${r.baseUrl}/models?limit=1000`, {
      'x-api-key': r.apiKey,
      'anthropic-version': '2023-06-01',
    });
    return ((body.data ?? []) as { id: string; created_at?: string }[]).map((m) => ({
      id: m.id,
      created: m.created_at ? Math.floor(Date.parse(m.created_at) / 1000) : undefined,
    }));
  }
  if (r.provider === 'google') {
    const body = await get(`${r.baseUrl}/models?pageSize=1000`, { 'x-goog-api-key': r.apiKey });
    return ((body.models ?? []) as { name: string }[]).map((m) => ({ id: m.name.replace(/^models\//, '') }));
  }
  // OpenAI, Mistral and the OpenAI-compatible `pier` server share OpenAI's shape.
  const body = await get(`${r.baseUrl}/models`, r.apiKey ? { authorization: `Bearer ${r.apiKey}` } : {});
  return ((body.data ?? []) as { id: string; created?: number }[]).map((m) => ({
    id: m.id,
    created: m.created,
  }));
}

const checked = new Map<string, { at: number; ids: Promise<Set<string> | null> }>();

/**
 * Whether the provider lists the model for this key: true or false when its list could be read, null when it
 * could not (unreachable, refused, slow), so a caller refuses only what it knows is not offered.
 */
export async function modelListed(r: ResolvedModel): Promise<boolean | null> {
  const k = [r.provider, r.baseUrl, crypto.createHash('sha256').update(r.apiKey).digest('hex')].join('\0');
  const now = Date.now();
  let hit = checked.get(k);
  if (!hit || now - hit.at > CHECK_TTL_MS) {
    if (checked.size > 1000) checked.clear();
    const ids = fetchList(r, CHECK_TIMEOUT_MS).then(
      // An empty list says nothing about what the provider serves.
      (list) => (list.length ? new Set(list.map((m) => m.id)) : null),
      () => null,
    );
    hit = { at: now, ids };
    checked.set(k, hit);
  }
  const ids = await hit.ids;
  return ids ? ids.has(r.model) : null;
}
