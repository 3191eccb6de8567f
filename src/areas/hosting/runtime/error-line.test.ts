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

  it("names a framework build's error, not the bundler's notice or a header with only a place", () => {
    // SvelteKit on Vite 8 (Rolldown), a template error
    const svelte = [
      '✓ 148 modules transformed.',
      '✗ Build failed in 1.06s',
      'error during build:',
      'Build failed with 1 error:',
      '',
      '[plugin vite-plugin-svelte:compile] /app/src/routes/+page.svelte:6:24',
      'RolldownError: /app/src/routes/+page.svelte:6:24 `</h2>` attempted to close an element that was not open',
      '    at aggregateBindingErrorsIntoJsError (file:///app/node_modules/rolldown/dist/shared/error.mjs:110:18)',
    ];
    expect(firstErrorLine(svelte)).toBe(svelte[6]);
    // Astro static, a syntax error in a page's frontmatter
    const astro = [
      '00:54:49 [build] Building static entrypoints...',
      '00:54:49 [ERROR] [vite] ✗ Build failed in 137ms',
      '[CompilerError] Unexpected token',
      '  Location:',
      '    /app/src/pages/index.astro:2:61',
    ];
    expect(firstErrorLine(astro)).toBe('[CompilerError] Unexpected token');
    // Next.js 16 (Turbopack), a JSX error
    const next = [
      'Error: Turbopack build failed with 1 error:',
      'Error: Expected corresponding JSX closing tag for <h1>',
      '    at printBuildErrors (/app/node_modules/next/dist/build/print-build-errors.js:134:15)',
    ];
    expect(firstErrorLine(next)).toBe(next[1]);
    // A notice alone is still better than nothing.
    expect(firstErrorLine(['[ERROR] [vite] ✗ Build failed in 137ms'])).toBe(
      '[ERROR] [vite] ✗ Build failed in 137ms',
    );
  });
});
