// Builds from source: startDeploymentForCli → live for a source-only artifact (package.json + lockfile with
// one small registry dependency and a build script), first build (empty npm cache) vs second build of the
// same lockfile (the project's cache). Needs the npm registry. Run: npm run bench:build-cache
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fixtures, packDir } from '../test/hosting.ts';
import { startPier } from './hosting-setup.ts';

async function sourceArtifact(version: string): Promise<Buffer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-bench-source-'));
  fs.cpSync(path.join(fixtures, 'source-app'), dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'version.json'), JSON.stringify({ version }));
  return packDir(dir);
}

const pier = await startPier();
try {
  const first = await pier.deploy(await sourceArtifact('1'));
  const second = await pier.deploy(await sourceArtifact('2'));
  console.log(`source-only deploy → live, first build (empty cache): ${first.ms.toFixed(0)} ms`);
  console.log(`source-only deploy → live, second build (same lockfile, cache): ${second.ms.toFixed(0)} ms`);
} finally {
  await pier.stop();
}
