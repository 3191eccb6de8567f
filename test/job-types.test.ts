import { describe, expect, it } from 'vitest';
import type { Deps } from '../src/deps.ts';

// Deps names no area, yet deps.jobs knows every area's jobs: each manifest declares its jobs' payloads in
// JobPayloads (module augmentation). These lines are checked by `tsc`; the test only makes them run.
function enqueueThroughDeps(deps: Deps): Promise<unknown>[] {
  return [
    deps.jobs.enqueue('cdn.video.merge', { mergeId: '00000000-0000-0000-0000-000000000000' }),
    deps.jobs.enqueue('blobs.sweep-temp', { olderThanMs: 1 }),
    // @ts-expect-error no job has this name
    deps.jobs.enqueue('cdn.nope', {}),
    // @ts-expect-error mergeId is a string
    deps.jobs.enqueue('cdn.video.merge', { mergeId: 1 }),
    // @ts-expect-error a schedule names a declared job too
    deps.jobs.schedule('memory.nope', '* * * * *', {}),
  ];
}

describe('the job registry seen through Deps', () => {
  it('type-checks names and payloads without naming an area', () => {
    const calls: string[] = [];
    const record = async (name: string) => void calls.push(name);
    const deps = { jobs: { enqueue: record, schedule: record } } as unknown as Deps;
    expect(enqueueThroughDeps(deps)).toHaveLength(5);
    expect(calls).toEqual([
      'cdn.video.merge',
      'blobs.sweep-temp',
      'cdn.nope',
      'cdn.video.merge',
      'memory.nope',
    ]);
  });
});
