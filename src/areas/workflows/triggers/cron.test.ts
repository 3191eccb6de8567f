import { describe, expect, it } from 'vitest';
import { CronError, checkTimeZone, lastSlot, nextSlot, parseCron } from './cron.ts';

// Cron slots as a user reads them in their own time zone, across DST changes and calendar edges.

const at = (s: string) => new Date(s);
const iso = (d: Date | null) => d?.toISOString() ?? null;

describe('cron', () => {
  it('finds the next and the last slot in UTC', () => {
    const c = parseCron('*/15 9-17 * * MON-FRI');
    expect(iso(nextSlot(c, 'UTC', at('2026-12-04T17:50:00Z')))).toBe('2026-12-07T09:00:00.000Z'); // Fri → Mon
    expect(iso(lastSlot(c, 'UTC', at('2026-12-07T09:14:59Z')))).toBe('2026-12-07T09:00:00.000Z');
    expect(iso(nextSlot(c, 'UTC', at('2026-12-07T09:00:00Z')))).toBe('2026-12-07T09:15:00.000Z');
  });

  it('reads wall time in the zone, summer and winter', () => {
    const c = parseCron('0 9 * * *');
    expect(iso(nextSlot(c, 'Europe/Oslo', at('2026-07-01T00:00:00Z')))).toBe('2026-07-01T07:00:00.000Z');
    expect(iso(nextSlot(c, 'Europe/Oslo', at('2026-12-01T00:00:00Z')))).toBe('2026-12-01T08:00:00.000Z');
    expect(iso(nextSlot(c, 'Asia/Kolkata', at('2026-12-01T00:00:00Z')))).toBe('2026-12-01T03:30:00.000Z');
  });

  it('runs a skipped wall time once after the jump and a repeated one once', () => {
    const c = parseCron('30 2 * * *');
    // 2026-03-29: Oslo jumps from 02:00 to 03:00; 02:30 does not exist and runs at 03:30 local (01:30Z).
    expect(iso(nextSlot(c, 'Europe/Oslo', at('2026-03-28T12:00:00Z')))).toBe('2026-03-29T01:30:00.000Z');
    // 2026-10-25: 02:30 happens twice; the first (CEST, 00:30Z) runs, the second does not.
    const first = nextSlot(c, 'Europe/Oslo', at('2026-10-24T12:00:00Z'));
    expect(iso(first)).toBe('2026-10-25T00:30:00.000Z');
    expect(iso(nextSlot(c, 'Europe/Oslo', first!))).toBe('2026-10-26T01:30:00.000Z');
  });

  it('matches either day field when both are restricted, and knows month ends', () => {
    const c = parseCron('0 0 13 * FRI');
    expect(iso(nextSlot(c, 'UTC', at('2026-11-10T00:00:00Z')))).toBe('2026-11-13T00:00:00.000Z');
    expect(iso(nextSlot(c, 'UTC', at('2026-11-13T00:00:00Z')))).toBe('2026-11-20T00:00:00.000Z');
    expect(iso(nextSlot(parseCron('0 0 31 * *'), 'UTC', at('2026-11-01T00:00:00Z')))).toBe(
      '2026-12-31T00:00:00.000Z',
    );
    expect(iso(nextSlot(parseCron('@hourly'), 'UTC', at('2026-11-01T00:00:00Z')))).toBe(
      '2026-11-01T01:00:00.000Z',
    );
    expect(nextSlot(parseCron('0 0 30 2 *'), 'UTC', at('2026-11-01T00:00:00Z'))).toBeNull();
  });

  it('refuses bad expressions and zones with a reason', () => {
    for (const bad of [
      '* * * *',
      '60 * * * *',
      '* 24 * * *',
      '*/0 * * * *',
      '5-1 * * * *',
      'x * * * *',
      '* * * FOO *',
    ])
      expect(() => parseCron(bad), bad).toThrow(CronError);
    expect(() => checkTimeZone('Mars/Olympus')).toThrow(RangeError);
    expect(() => checkTimeZone('America/New_York')).not.toThrow();
  });
});
