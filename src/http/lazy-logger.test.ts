import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { accessLogger } from './access-log.ts';
import { LazyLogger } from './lazy-logger.ts';

function capture(level = 'info') {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  const log = pino({ level, redact: { paths: ['*.token'], censor: '[redacted]' } }, sink);
  return { lines, log: log as unknown as FastifyBaseLogger };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('LazyLogger', () => {
  it('makes its child only when something logs at an enabled level, with the bindings and redaction', async () => {
    const { lines, log } = capture();
    let children = 0;
    const parent = new Proxy(log, {
      get(target, prop, recv) {
        if (prop === 'child') {
          return (...a: Parameters<FastifyBaseLogger['child']>) => {
            children++;
            return target.child(...a);
          };
        }
        return Reflect.get(target, prop, recv);
      },
    });
    const lazy = new LazyLogger(parent, { reqId: 'r1' }, {});
    lazy.debug('not enabled');
    expect(children).toBe(0);
    expect(lazy.level).toBe('info');
    lazy.info({ body: { token: 'pk.secret' }, n: 1 }, 'hello');
    lazy.warn('again');
    expect(children).toBe(1);
    await flush();
    expect(lines).toMatchObject([
      { reqId: 'r1', msg: 'hello', n: 1, body: { token: '[redacted]' }, level: 30 },
      { reqId: 'r1', msg: 'again', level: 40 },
    ]);
  });

  it('honours a route log level given to the child', async () => {
    const { lines, log } = capture();
    const lazy = new LazyLogger(log, { reqId: 'r2' }, { level: 'debug' });
    lazy.debug('shown');
    await flush();
    expect(lines).toMatchObject([{ reqId: 'r2', msg: 'shown', level: 20 }]);
  });
});

describe('accessLogger', () => {
  it("writes pino's line format from safe fields, and nothing below the logger's level", async () => {
    const { lines, log } = capture();
    accessLogger(log)('req-1', 'POST', '/api/fn/x"y', 200, 1.5);
    await flush();
    expect(lines).toEqual([
      {
        level: 30,
        time: expect.any(Number),
        pid: process.pid,
        hostname: expect.any(String),
        reqId: 'req-1',
        method: 'POST',
        path: '/api/fn/x"y',
        status: 200,
        ms: 1.5,
        msg: 'request',
      },
    ]);
    const quiet = capture('warn');
    accessLogger(quiet.log)('req-2', 'GET', '/', 200, 1);
    await flush();
    expect(quiet.lines).toEqual([]);
  });
});
