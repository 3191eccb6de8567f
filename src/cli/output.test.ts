import { describe, expect, it } from 'vitest';
import { PierApiError } from '../sdk/client.ts';
import { CliError, describeFailure } from './errors.ts';
import { fields, table } from './output.ts';

describe('CLI output', () => {
  it('renders aligned tables with capitalised headers, and a sentence for an empty list', () => {
    const rows = [
      { slug: 'acme', role: 'owner' },
      { slug: 'b', role: null },
    ];
    const cols = [
      { header: 'slug', value: (r: (typeof rows)[number]) => r.slug },
      { header: 'role', value: (r: (typeof rows)[number]) => r.role },
    ];
    expect(table(rows, cols, 'none')).toBe('SLUG  ROLE\nacme  owner\nb     -\n');
    expect(table([], cols, 'Nothing yet.')).toBe('Nothing yet.\n');
    expect(
      fields([
        ['id', '1'],
        ['status', 'ready'],
      ]),
    ).toBe('id:     1\nstatus: ready\n');
  });

  it('never writes control characters from the server to the terminal', () => {
    expect(fields([['name', 'evil\u001b[2Jname\nx']])).toBe('name: evil?[2Jname?x\n');
  });

  it('prints every failure as one `error CODE: message` line with its exit status', () => {
    expect(describeFailure(new PierApiError('PROJECT_NOT_FOUND', 404, "Project 'x' was not found."))).toEqual(
      {
        line: "error PROJECT_NOT_FOUND: Project 'x' was not found.",
        exitCode: 1,
      },
    );
    expect(describeFailure(new CliError('USAGE', 'bad\n  input', 2))).toEqual({
      line: 'error USAGE: bad input',
      exitCode: 2,
    });
    expect(describeFailure(new Error('boom'))).toEqual({ line: 'error INTERNAL: boom', exitCode: 1 });
  });
});
