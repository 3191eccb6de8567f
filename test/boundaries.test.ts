import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// The areas layout's boundary check (npm run check:boundaries) catches each kind of broken rule, and the
// real tree keeps them all.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CONFIG = path.join(ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = path.join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');

async function cruise(cwd: string): Promise<{ code: number; out: string }> {
  try {
    const r = await promisify(execFile)(
      process.execPath,
      [DEPCRUISE, 'src', '--config', CONFIG, '-T', 'err'],
      {
        cwd,
      },
    );
    return { code: 0, out: r.stdout };
  } catch (err) {
    const e = err as { code: number; stdout: string };
    return { code: e.code, out: e.stdout };
  }
}

describe('boundary check', () => {
  it('names every broken rule in a tree that breaks them', async () => {
    const r = await cruise(path.join(ROOT, 'test/fixtures/boundaries'));
    expect(r.code).not.toBe(0);
    expect(r.out).toContain('core-imports-no-area: src/core/leaky.ts → src/areas/alpha/index.ts');
    expect(r.out).toContain('area-through-index: src/areas/beta/index.ts → src/areas/alpha/helper.ts');
    expect(r.out).toContain('outside-through-index: src/http/route.ts → src/areas/alpha/helper.ts');
    expect(r.out).toMatch(/no-cycles: src\/areas\/beta\/p[io]ng\.ts/);
    // Type-only imports count: a cycle of `import type` alone is still a cycle.
    expect(r.out).toMatch(/no-cycles: src\/areas\/gamma\/(shape|holder)\.ts/);
  });

  it('passes on the project itself', async () => {
    const r = await cruise(ROOT);
    expect(r.out).toContain('no dependency violations found');
    expect(r.code).toBe(0);
  }, 60_000);
});
