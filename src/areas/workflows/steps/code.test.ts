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
