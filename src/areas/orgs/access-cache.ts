import { listen, type Unlisten } from '../../core/db/notify.ts';
import type { Deps } from '../../deps.ts';
import type { Org, Project, Role } from './tables.ts';

// Per-process cache of "which project does this slug name for this user, with which role". Every read of
// a project by a personal token needs it, and it is one join per request otherwise.
//
// Correctness rests on invalidation, not on the TTL: a trigger on memberships, projects and orgs
// (migrations/platform/0001) NOTIFYs `pier_access_changed` on any write by anyone, and every process drops
// its whole cache on that message. The cache only serves while its LISTEN connection is alive (it reconnects
// with back-off, and the cache starts over empty when it does); a generation
// counter stops a lookup that raced an invalidation from storing what it read. Only positive answers are
// cached, so a new project or membership is never hidden. The TTL is a last safety net.

export const ACCESS_CHANNEL = 'pier_access_changed';
const TTL_MS = 10_000;
const MAX_ENTRIES = 10_000;

export type Access = { project: Project; org: Org; role: Role };

export class AccessCache {
  // userId → slug → entry: a lookup joins no strings (a combined key cost a concatenation, its flattening
  // and hashing on every call).
  readonly #entries = new Map<string, Map<string, { value: Access; at: number }>>();
  #size = 0;
  #generation = 0;
  /** Serving from memory is allowed only while invalidations can reach this process. */
  enabled = false;

  get(userId: string, slug: string, nowMs: number): Access | null {
    if (!this.enabled) return null;
    const forUser = this.#entries.get(userId);
    const hit = forUser?.get(slug);
    if (!hit) return null;
    if (nowMs - hit.at > TTL_MS) {
      forUser!.delete(slug);
      this.#size--;
      return null;
    }
    return hit.value;
  }

  /** Call before reading the database; pass the result to set() so a racing invalidation wins. */
  generation(): number {
    return this.#generation;
  }

  set(userId: string, slug: string, value: Access, nowMs: number, generation: number): void {
    if (!this.enabled || generation !== this.#generation) return;
    if (this.#size >= MAX_ENTRIES) this.#clear();
    let forUser = this.#entries.get(userId);
    if (!forUser) {
      forUser = new Map();
      this.#entries.set(userId, forUser);
    }
    if (!forUser.has(slug)) this.#size++;
    forUser.set(slug, { value, at: nowMs });
  }

  invalidate(): void {
    this.#generation++;
    this.#clear();
  }

  #clear(): void {
    this.#entries.clear();
    this.#size = 0;
  }

  get size(): number {
    return this.#size;
  }
}

const caches = new WeakMap<Deps, AccessCache>();

export function accessCache(deps: Deps): AccessCache {
  let c = caches.get(deps);
  if (!c) {
    c = new AccessCache();
    caches.set(deps, c);
  }
  return c;
}

/** Subscribes the cache to the invalidation channel and turns it on (called by startBackground). */
export async function startAccessCache(deps: Deps): Promise<Unlisten> {
  const cache = accessCache(deps);
  const off = () => {
    cache.enabled = false;
    cache.invalidate();
  };
  // While the connection is down the cache is off (every lookup reads the database); once listening again
  // it starts empty, since invalidations sent meanwhile were missed.
  const unlisten = await listen(deps.db, deps.config.databaseUrl, ACCESS_CHANNEL, () => cache.invalidate(), {
    onLost: off,
    onRestored: () => {
      cache.invalidate();
      cache.enabled = true;
    },
  });
  cache.invalidate();
  cache.enabled = true;
  return async () => {
    off();
    await unlisten();
  };
}
