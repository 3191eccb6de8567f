import { describe, expect, it } from 'vitest';
import { runInSandbox } from './code.ts';

// The code step's sandbox (QuickJS in WASM): JSON in and out, and refusals of what must not work.

const opts = { timeLimitMs: 300, memoryLimitMb: 32 };

describe('code sandbox', () => {
  it('takes JSON input and returns JSON', async () => {
    expect(
      await runInSandbox('return { n: input.n + 1, s: input.s.toUpperCase() }', { n: 1, s: 'a' }, opts),
    ).toEqual({
      ok: true,
      value: { n: 2, s: 'A' },
    });
  });

  it('stops an endless loop at the time limit', async () => {
    expect(await runInSandbox('while (true) {}', {}, opts)).toEqual({
      ok: false,
      error: 'Time limit of 300 ms exceeded.',
    });
  });

  it('refuses a 1 GB allocation at the memory limit', async () => {
    const r = await runInSandbox(
      'const b = new ArrayBuffer(1024 * 1024 * 1024); return b.byteLength',
      {},
      opts,
    );
    expect(r).toEqual({ ok: false, error: 'Memory limit of 32 MB exceeded.' });
    const grow = await runInSandbox(
      'const a = []; for (;;) a.push(new Array(1e5).fill(1)); return 1',
      {},
      {
        ...opts,
        timeLimitMs: 5000,
      },
    );
    expect(grow.ok).toBe(false);
  });

  it('has no process, require, network or files', async () => {
    const probe = `return [typeof process, typeof require, typeof fetch, typeof XMLHttpRequest, typeof std,
      typeof os, typeof Deno, typeof Bun, typeof globalThis.process, typeof setTimeout]`;
    expect(await runInSandbox(probe, {}, opts)).toEqual({ ok: true, value: Array(10).fill('undefined') });
    const req = await runInSandbox("return require('fs').readFileSync('/etc/passwd', 'utf8')", {}, opts);
    expect(req).toEqual({ ok: false, error: "ReferenceError: 'require' is not defined" });
    const proc = await runInSandbox('return process.env', {}, opts);
    expect(proc).toEqual({ ok: false, error: "ReferenceError: 'process' is not defined" });
    const net = await runInSandbox("return fetch('http://169.254.169.254/')", {}, opts);
    expect(net).toEqual({ ok: false, error: "ReferenceError: 'fetch' is not defined" });
    // A module import has no loader to reach: the promise never settles into anything usable.
    const imp = await runInSandbox(
      "let r = 'none'; import('fs').then(() => { r = 'loaded'; }); return r",
      {},
      opts,
    );
    expect(imp).toEqual({ ok: true, value: 'none' });
  });

  it('reports a thrown error and an abort', async () => {
    expect(await runInSandbox("throw new TypeError('bad')", {}, opts)).toEqual({
      ok: false,
      error: 'TypeError: bad',
    });
    const ac = new AbortController();
    ac.abort();
    expect(await runInSandbox('while (true) {}', {}, { ...opts, signal: ac.signal })).toEqual({
      ok: false,
      error: 'Cancelled.',
    });
  });
});

describe('code sandbox pool', () => {
  it('gives each step fresh globals', async () => {
    expect(await runInSandbox('globalThis.leak = 42; Object.prototype.x = 1; return 1', {}, opts)).toEqual({
      ok: true,
      value: 1,
    });
    expect(await runInSandbox('return [typeof globalThis.leak, ({}).x ?? null]', {}, opts)).toEqual({
      ok: true,
      value: ['undefined', null],
    });
  });

  it('recovers after an endless loop and runs many steps fast', async () => {
    const loops = await Promise.all(
      Array.from({ length: 5 }, () => runInSandbox('while (true) {}', {}, opts)),
    );
    for (const r of loops) expect(r).toEqual({ ok: false, error: 'Time limit of 300 ms exceeded.' });
    const t0 = performance.now();
    for (let i = 0; i < 20; i++)
      expect(await runInSandbox('return input.i * 2', { i }, opts)).toEqual({ ok: true, value: i * 2 });
    // Warm: twenty steps one after another take well under the cost of starting one thread and engine.
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it('awaits a returned Promise, and refuses one that can never settle', async () => {
    expect(
      await runInSandbox('return Promise.resolve(input.n).then((n) => ({ n: n + 1 }))', { n: 1 }, opts),
    ).toEqual({ ok: true, value: { n: 2 } });
    expect(await runInSandbox('const f = async () => [1, 2]; return f()', {}, opts)).toEqual({
      ok: true,
      value: [1, 2],
    });
    expect(await runInSandbox("return Promise.reject(new Error('nope'))", {}, opts)).toEqual({
      ok: false,
      error: 'The returned Promise was rejected: Error: nope',
    });
    expect(await runInSandbox('return new Promise(() => {})', {}, opts)).toEqual({
      ok: false,
      error: 'The code returned a Promise that never settles: the sandbox has no timers or I/O to wait for.',
    });
  });

  it("refuses an output over a step's limit", async () => {
    const r = await runInSandbox("return 'x'.repeat(5 * 1024 * 1024)", {}, opts);
    expect(r).toEqual({
      ok: false,
      error: "Output too large: 5.0 MB of JSON, over the 1.0 MB limit for a step's output.",
    });
  });
});
