import { eq } from 'drizzle-orm';
import type { Deps } from '../../deps.ts';
import { secrets } from './tables.ts';

export const SECRET_KEY_RE = /^[A-Z][A-Z0-9_]*$/;
/** Longer than the contract asks (it gives only the pattern): a longer key is INVALID_KEY like any malformed one. */
export const MAX_SECRET_KEY_CHARS = 256;
export const validKey = (key: string) => key.length <= MAX_SECRET_KEY_CHARS && SECRET_KEY_RE.test(key);
const PROTECTED = new Set(['PORT', 'DATABASE_URL', 'HOST', 'NODE_ENV']);
export const MAX_SECRET_BYTES = 65536;

export function isProtectedKey(key: string): boolean {
  return PROTECTED.has(key) || key.startsWith('PIER_');
}

/** Listeners told when a project's secrets change (the hosting runtime restarts the app with them). */
export type SecretsListener = (projectId: string) => void;
const listeners = new WeakMap<Deps, SecretsListener[]>();
export function onSecretsChanged(deps: Deps, fn: SecretsListener): void {
  listeners.set(deps, [...(listeners.get(deps) ?? []), fn]);
}
export function emitChanged(deps: Deps, projectId: string): void {
  for (const fn of listeners.get(deps) ?? []) fn(projectId);
}

/** The decrypted environment of a project, for the runtime only; never returned by any API. */
export async function projectSecretEnv(deps: Deps, projectId: string): Promise<Record<string, string>> {
  const rows = await deps.db.orm.select().from(secrets).where(eq(secrets.projectId, projectId));
  return Object.fromEntries(rows.map((r) => [r.key, deps.keyring.decrypt(r.valueEnc)]));
}
