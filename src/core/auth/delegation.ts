import crypto from 'node:crypto';
import type { Caller } from './caller.ts';

// A caller handed from one in-process request to another (the MCP endpoint calling the real routes through
// app.inject) when the bearer itself cannot be passed on: a user's token reaching a v1 route as an
// organization's sandbox, an OAuth token whose grant was already checked. The header value is a random,
// single-use nonce known only inside this process, so no outside request can present one.

export const DELEGATION_HEADER = 'x-pier-delegation';

const pending = new Map<string, Caller>();

/** Registers a caller for one injected request; `release` forgets it if the request never took it. */
export function delegate(caller: Caller): { value: string; release: () => void } {
  const value = crypto.randomBytes(32).toString('base64url');
  pending.set(value, caller);
  return { value, release: () => pending.delete(value) };
}

/** The delegated caller named by the header, taken once; undefined when there is none (or it is unknown). */
export function takeDelegated(header: string | string[] | undefined): Caller | undefined {
  if (typeof header !== 'string') return undefined;
  const caller = pending.get(header);
  if (caller) pending.delete(header);
  return caller;
}
