import { describe, expect, it } from 'vitest';
import { anchoredPeriod, parseAnchor } from './time-anchors.ts';

// Anchored times (decision 141): the phrasing recognised and the period counted from the anchor's day.

const at = new Date('2026-02-10T15:30:00Z');
const period = (q: string) => {
  const a = parseAnchor(q);
  if (!a) return null;
  const p = anchoredPeriod(a, at);
  return [a.anchor, p.from.toISOString().slice(0, 10), p.to.toISOString().slice(0, 10)];
};

describe('anchored times', () => {
  it('reads "the week after X", "two days before X", "3 weeks after X" and leaves other text alone', () => {
    expect(period('what did she do the week after the adoption meeting?')).toEqual([
      'the adoption meeting',
      '2026-02-11',
      '2026-02-18',
    ]);
    expect(period('Two days before the launch, who called?')).toEqual([
      'the launch',
      '2026-02-08',
      '2026-02-09',
    ]);
    expect(period('the day after the wedding')).toEqual(['the wedding', '2026-02-11', '2026-02-12']);
    expect(period('the month before the move')).toEqual(['the move', '2026-01-11', '2026-02-10']);
    // a point a number of weeks away is about its week
    expect(period('3 weeks after the interview')).toEqual(['the interview', '2026-02-28', '2026-03-07']);
    expect(period('what happened after the meeting?')).toBeNull();
    expect(period('last week')).toBeNull();
  });
});
