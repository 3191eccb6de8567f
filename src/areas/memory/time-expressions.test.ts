import { describe, expect, it } from 'vitest';
import { compareStatements, splitStatements } from './statements.ts';
import { eventEnd, eventTimeOf, resolveEventTime } from './time-expressions.ts';

// The pure parts of inference and time: what a person would check by reading the stored memory.

const ref = new Date('2026-03-10T12:00:00Z'); // a Tuesday
const at = (text: string) => {
  const t = resolveEventTime(text, ref);
  return t ? [t.at.toISOString().slice(0, 10), t.precision] : null;
};

describe('time expressions', () => {
  it('resolves the common English forms against the time they were said', () => {
    expect(at('I moved to Lisbon last month')).toEqual(['2026-02-01', 'month']);
    expect(at('yesterday I ran 10 km')).toEqual(['2026-03-09', 'day']);
    expect(at('the day before yesterday')).toEqual(['2026-03-08', 'day']);
    expect(at('we met 3 weeks ago')).toEqual(['2026-02-16', 'week']);
    expect(at('two years ago we married')).toEqual(['2024-01-01', 'year']);
    expect(at('next week is the exam')).toEqual(['2026-03-16', 'week']);
    expect(at('last Friday was fun')).toEqual(['2026-03-06', 'day']);
    expect(at('this Monday')).toEqual(['2026-03-09', 'day']);
    expect(at('in 3 days')).toEqual(['2026-03-13', 'day']);
    expect(at('since 2020 I work there')).toEqual(['2020-01-01', 'year']);
  });
  it('reads dates written differently; a month without a year is the latest one not after the reference', () => {
    expect(at('On 3 March 2025 we signed')).toEqual(['2025-03-03', 'day']);
    expect(at('March 3rd, 2024')).toEqual(['2024-03-03', 'day']);
    expect(at('the meeting on 2025-02-14')).toEqual(['2025-02-14', 'day']);
    expect(at('in February')).toEqual(['2026-02-01', 'month']);
    expect(at('in May')).toEqual(['2025-05-01', 'month']);
    expect(at('Feb 2')).toEqual(['2026-02-02', 'day']);
  });
  it('does not take verbs and names for months, nor guess', () => {
    expect(at('I may go')).toBeNull();
    expect(at('we march on')).toBeNull();
    expect(at('nothing about time here')).toBeNull();
  });
  it('takes the first expression in the text; a period ends after its precision', () => {
    expect(at('Yesterday I said that in 2019 I lived abroad')).toEqual(['2026-03-09', 'day']);
    const feb = resolveEventTime('last month', ref)!;
    expect(eventEnd(feb).toISOString()).toBe('2026-03-01T00:00:00.000Z');
  });
  it('prefers the time told, then the text, then the time it was said', () => {
    const now = new Date('2026-12-07T00:00:00Z');
    expect(eventTimeOf({ content: 'last month', eventAt: '2025-01-05T10:00:00Z' }, now)).toEqual({
      at: new Date('2025-01-05T10:00:00Z'),
      precision: 'instant',
    });
    expect(eventTimeOf({ content: 'x', metadata: { eventAt: '2025-01' } }, now)?.precision).toBe('month');
    expect(eventTimeOf({ content: 'last month', referenceTime: '2026-03-10T00:00:00Z' }, now)?.at).toEqual(
      new Date('2026-02-01T00:00:00Z'),
    );
    expect(eventTimeOf({ content: 'I like tea', referenceTime: '2026-03-10T00:00:00Z' }, now)).toEqual({
      at: new Date('2026-03-10T00:00:00Z'),
      precision: 'instant',
    });
    expect(eventTimeOf({ content: 'I like tea' }, now)).toBeNull();
  });
});

describe('statements (inference without a model)', () => {
  it('splits sentences, lines and clauses with their own subject; drops questions and pleasantries', () => {
    expect(splitStatements('I moved to Lisbon last month, the Berlin flat is sold')).toEqual([
      'I moved to Lisbon last month.',
      'The Berlin flat is sold.',
    ]);
    expect(
      splitStatements(
        'Hi! Thanks. Where do you live? I work at Acme as a nurse and my sister lives in Porto.',
      ),
    ).toEqual(['I work at Acme as a nurse.', 'My sister lives in Porto.']);
    // "and" between two verbs of one subject is not a new statement.
    expect(splitStatements('I love hiking and camping in the mountains.')).toEqual([
      'I love hiking and camping in the mountains.',
    ]);
    expect(splitStatements('- My dog is called Rex\n- ok')).toEqual(['My dog is called Rex.']);
  });
  it('tells exact and near duplicates and fuller statements apart', () => {
    expect(compareStatements('I moved to Lisbon last month.', 'i moved to lisbon LAST month!')).toBe('exact');
    expect(compareStatements('My dog Rex is a black labrador.', 'My dog is Rex.')).toBe('fuller');
    expect(compareStatements('The user works at Acme.', 'The user works at Acme as a nurse.')).toBe(
      'different',
    );
    expect(compareStatements('Caroline adopted two cats in May.', 'Caroline adopted 2 cats in May.')).toBe(
      'different',
    );
    expect(
      compareStatements('Caroline adopted two cats in May 2023.', 'Caroline adopted two cats in May.'),
    ).toBe('fuller');
  });
});
