/** Time source passed in as a dependency so tests can move time (code expiry, schedules). */
export type Clock = {
  now(): Date;
  /** The same instant as `now()` in epoch ms, without allocating a Date (hot paths compare numbers). */
  nowMs(): number;
};

export const systemClock: Clock = { now: () => new Date(), nowMs: () => Date.now() };

export class ManualClock implements Clock {
  #t: number;
  constructor(start: Date | number = Date.now()) {
    this.#t = typeof start === 'number' ? start : start.getTime();
  }
  now(): Date {
    return new Date(this.#t);
  }
  nowMs(): number {
    return this.#t;
  }
  advance(ms: number): void {
    this.#t += ms;
  }
  set(at: Date | number): void {
    this.#t = typeof at === 'number' ? at : at.getTime();
  }
}
