import { describe, expect, it } from 'vitest';
import { retryableSandboxFailure } from './sandbox.ts';

// A start that dies in bwrap's loopback set-up is started once more (decision 082); any other exit is the app's.

describe('the sandbox start retry', () => {
  it("retries exactly bwrap's loopback set-up failure", () => {
    const flake = 'bwrap: loopback: Failed RTM_NEWADDR: No child processes';
    expect(retryableSandboxFailure(['some warning', flake])).toBe(flake);
    expect(
      retryableSandboxFailure(['bwrap: loopback: Failed RTM_NEWLINK: Operation not permitted']),
    ).not.toBeNull();
  });

  it('does not retry other failures', () => {
    expect(retryableSandboxFailure([])).toBeNull();
    expect(retryableSandboxFailure(['Error: Cannot find module /app/server.js'])).toBeNull();
    expect(retryableSandboxFailure(['bwrap: Creating newroot failed: Permission denied'])).toBeNull();
    expect(retryableSandboxFailure(['bwrap: loopback: Failed to look up lo'])).toBeNull();
    expect(retryableSandboxFailure(["pier: the app's network (slirp4netns) ended (code 1): "])).toBeNull();
  });
});
