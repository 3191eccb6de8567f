import { describe, expect, it } from 'vitest';
import { firstErrorLine } from './error-line.ts';

describe('firstErrorLine', () => {
  it('names the error, not the stack tail or npm noise', () => {
    const out = [
      'npm warn deprecated x',
      '/app/server.js:3',
      'const x = ;',
      '          ^',
      '',
      "\x1b[31mSyntaxError: Unexpected token ';'\x1b[39m",
      '    at wrapSafe (node:internal/modules/cjs/loader:1469:18)',
      'npm error code 1',
    ];
    expect(firstErrorLine(out)).toBe("SyntaxError: Unexpected token ';'");
    expect(firstErrorLine(['src/main.tsx(4,7): error TS2322: Type x'])).toBe(
      'src/main.tsx(4,7): error TS2322: Type x',
    );
    expect(firstErrorLine(['error during build:', '[vite]: Rollup failed'])).toBe('error during build:');
    expect(firstErrorLine(['npm error Missing script: "build"', 'npm error A complete log'])).toBe(
      'npm error Missing script: "build"',
    );
    expect(firstErrorLine(['ok', 'done'])).toBeNull();
  });
});
