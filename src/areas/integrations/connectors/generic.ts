import type { ProviderEntry } from '../catalogue/schema.ts';
import { type Account, messageAt, type ProviderCall, type ProviderResponse } from './types.ts';

// What a catalogue entry without code does: read the account from the entry's `account` endpoint, and find
// the message in an error body at the places most APIs put it.

export function genericErrorMessage(res: ProviderResponse): string | null {
  return messageAt(
    res,
    'error.message',
    'message',
    'error_description',
    'errors.0.message',
    'errors.0.detail',
    'detail',
    'title',
    'error',
  );
}

function at(json: unknown, path: string): unknown {
  let v = json;
  for (const k of path.split('.'))
    v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

const text = (v: unknown): string | null =>
  typeof v === 'string' && v ? v : typeof v === 'number' ? String(v) : null;

export function genericAccount(e: ProviderEntry) {
  return async (call: ProviderCall): Promise<Account> => {
    if (!e.account) return { id: '', name: null };
    const json = (await call({ method: 'GET', path: e.account.path })).json();
    return {
      id: text(at(json, e.account.id)) ?? '',
      name: e.account.name ? text(at(json, e.account.name)) : null,
    };
  };
}
