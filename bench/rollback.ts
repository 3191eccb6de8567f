// Rollback vs redeploy of a source-built app (npm ci + build): request → live, median of 3 each, in the same
// run. A rollback runs a kept build (no download, no install, no build); a redeploy rebuilds the stored
// artifact. Run: npm run bench:rollback
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fixtures, packDir } from '../test/hosting.ts';
import { startPier } from './hosting-setup.ts';

const pier = await startPier();
const call = async (name: string, body: unknown) => {
  const r = await fetch(`http://127.0.0.1:${pier.port}/api/fn/${name}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${pier.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = await r.json();
  if (r.status !== 200) throw new Error(`${name}: ${r.status} ${JSON.stringify(json)}`);
  return json;
};
async function untilLive(id: string, t0: number): Promise<number> {
  for (;;) {
    const d = await call('getDeploymentForCli', { deploymentId: id });
    if (d.status === 'live') return performance.now() - t0;
    if (d.status === 'failed') throw new Error(`failed: ${d.errorMessage}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
const source = async (version: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-bench-src-'));
  fs.cpSync(path.join(fixtures, 'source-app'), dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'version.json'), JSON.stringify({ version }));
  return packDir(dir);
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

try {
  const v1 = await pier.deploy(await source('1'));
  const v2 = await pier.deploy(await source('2'));
  const slug = pier.project.slug;
  const rollbacks: number[] = [];
  const redeploys: number[] = [];
  for (let i = 0; i < 3; i++) {
    const target = i % 2 === 0 ? v1.id : v2.id;
    const t0 = performance.now();
    const rb = await call('rollbackDeploymentForCli', { projectSlug: slug, deploymentId: target });
    rollbacks.push(await untilLive(rb.id, t0));
    const t1 = performance.now();
    const re = await call('redeployDeploymentForCli', { projectSlug: slug, deploymentId: target });
    redeploys.push(await untilLive(re.id, t1));
  }
  const rb = median(rollbacks);
  const re = median(redeploys);
  console.log(`first deploys (build from source): ${v1.ms.toFixed(0)} ms, ${v2.ms.toFixed(0)} ms`);
  console.log(`rollbacks: ${rollbacks.map((x) => x.toFixed(0)).join(', ')} ms`);
  console.log(`redeploys: ${redeploys.map((x) => x.toFixed(0)).join(', ')} ms`);
  console.log(
    `median rollback ${rb.toFixed(0)} ms vs redeploy ${re.toFixed(0)} ms: ${(rb / re).toFixed(2)}×`,
  );
} finally {
  await pier.stop();
}
