import { describe, expect, it } from 'vitest';
import { PierApiError } from '../../sdk/errors.ts';
import {
  type DeployApi,
  type DeploymentView,
  followDeployment,
  isTransient,
  type LogLine,
} from './follow.ts';
import { failureLines, firstErrorIndex, forOutput, stripAnsi } from './log-text.ts';

// Following a deployment through lost connections, and how its lines are printed.

const reset = () => new PierApiError('NETWORK_ERROR', 0, 'Could not reach Pier at http://x (ECONNRESET).');

/** A server whose deployment walks through `statuses`; calls listed in `dropAt` fail with a reset. */
function fakeApi(statuses: DeploymentView['status'][], lines: LogLine[], dropAt: Set<number>): DeployApi {
  let call = 0;
  let step = 0;
  const maybeDrop = () => {
    if (dropAt.has(call++)) throw reset();
  };
  return {
    getDeployment: async (id) => {
      maybeDrop();
      const status = statuses[Math.min(step++, statuses.length - 1)]!;
      return {
        id,
        status,
        url: 'http://a.apps.test',
        errorMessage: status === 'failed' ? 'boom' : undefined,
      };
    },
    logs: async (o) => {
      maybeDrop();
      return lines.filter(
        (l) => l.id > (o.afterId ?? 0) && (!o.deploymentId || l.deploymentId === o.deploymentId),
      );
    },
  };
}

const line = (id: number, text: string, deploymentId = 'd1'): LogLine => ({
  id,
  ts: '2026-12-07T00:00:00Z',
  stream: 'stderr',
  line: text,
  deploymentId,
});

describe('followDeployment', () => {
  it('goes on through resets to live, telling each line once and the reconnect once per outage', async () => {
    const lines = [line(1, 'building'), line(2, 'the live one', 'd0'), line(3, 'starting')];
    const api = fakeApi(['building', 'building', 'starting', 'live'], lines, new Set([1, 2, 3, 6]));
    const seen: string[] = [];
    const reconnects: unknown[] = [];
    const statuses: string[] = [];
    const r = await followDeployment(api, 'd1', {
      everyMs: 1,
      onLog: (l) => seen.push(l.line),
      onReconnect: (e) => reconnects.push(e),
      onStatus: (s) => statuses.push(s),
    });
    expect(r.deployment.status).toBe('live');
    expect(seen).toEqual(['building', 'starting']);
    expect(statuses).toEqual(['building', 'starting', 'live']);
    expect(reconnects).toHaveLength(2);
  });

  it("ends failed with the deployment's own lines only", async () => {
    const lines = [line(1, 'SyntaxError: x'), line(2, 'GET / 200', 'd0')];
    const r = await followDeployment(fakeApi(['starting', 'failed'], lines, new Set([2])), 'd1', {
      everyMs: 1,
    });
    expect(r.deployment.status).toBe('failed');
    expect(r.lastLogs.map((l) => l.line)).toEqual(['SyntaxError: x']);
  });

  it('gives up on an error that is not about the connection', async () => {
    const api: DeployApi = {
      getDeployment: async () => {
        throw new PierApiError('DEPLOYMENT_NOT_FOUND', 404, 'gone');
      },
      logs: async () => [],
    };
    await expect(followDeployment(api, 'd1')).rejects.toThrow('gone');
    expect(isTransient(new PierApiError('INTERNAL', 503, 'x'))).toBe(true);
    expect(isTransient(new PierApiError('TIMEOUT', 0, 'x'))).toBe(true);
    expect(isTransient(new PierApiError('VALIDATION_ERROR', 400, 'x'))).toBe(false);
  });
});

describe('log lines for people', () => {
  it('strips ANSI colours off a terminal and keeps them on one', () => {
    const red = '\x1b[31mError:\x1b[39m bad \x1b]8;;http://x\x07link\x1b]8;;\x07';
    expect(stripAnsi(red)).toBe('Error: bad link');
    expect(forOutput(red, false)).toBe('Error: bad link');
    expect(forOutput(red, true)).toBe(red);
  });

  it('marks the first error line: an Error, a compiler message, else npm', () => {
    expect(firstErrorIndex(['> vite build', 'npm error code 1', 'src/a.ts(3,1): error TS2322: no'])).toBe(2);
    expect(firstErrorIndex(['at x', '\x1b[31mTypeError: y is not a function\x1b[0m', 'Error: later'])).toBe(
      1,
    );
    expect(firstErrorIndex(['✘ [ERROR] Could not resolve "x"'])).toBe(0);
    expect(firstErrorIndex(['npm error Missing script: "build"'])).toBe(0);
    expect(firstErrorIndex(['all good'])).toBe(-1);
    const printed = failureLines([line(1, 'compiling'), line(2, '\x1b[31mSyntaxError: nope\x1b[0m')], false);
    expect(printed).toEqual(['  | compiling', '> | SyntaxError: nope']);
    expect(failureLines([line(2, 'SyntaxError: nope')], true)[0]).toBe(
      '\x1b[1;31m> | SyntaxError: nope\x1b[0m',
    );
    // The line the stored reason quotes is the one marked, so the two agree.
    const astro = [
      line(1, '[ERROR] [vite] ✗ Build failed in 137ms'),
      line(2, '[CompilerError] Unexpected token'),
    ];
    expect(
      failureLines(astro, false, 'The build failed (exit code 1): [CompilerError] Unexpected token'),
    ).toEqual(['  | [ERROR] [vite] ✗ Build failed in 137ms', '> | [CompilerError] Unexpected token']);
  });
});
