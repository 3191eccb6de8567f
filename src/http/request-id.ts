import crypto from 'node:crypto';

// Request ids keep the UUID shape clients and tests know (docs/function-api.md), but only the first
// request of a process pays for randomness: the head is a random version-4 UUID's (74 random bits, new
// per process and per wrap-around), the last 12 hex digits count requests. crypto.randomUUID per request
// cost ≈ 1 % of a function call (decision 087). Unique within the process; across processes as likely to
// collide as two random 74-bit values. The price: two ids from one process show how many requests it
// answered between them.

const COUNTER_LIMIT = 2 ** 48;

let prefix = '';
let next = COUNTER_LIMIT;

/** A fresh UUID-shaped id, unique within this process. */
export function nextRequestId(): string {
  if (next >= COUNTER_LIMIT) {
    // "xxxxxxxx-xxxx-4xxx-yxxx-": a random version-4 UUID's head, its last group replaced by the counter.
    prefix = crypto.randomUUID().slice(0, 24);
    next = 0;
  }
  const n = next++;
  return prefix + n.toString(16).padStart(12, '0');
}
