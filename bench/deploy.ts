// Deploy latency: startDeploymentForCli → live for a small Node app, median of 5 (after one warm-up that
// also opens the project's PGlite database). Run: npm run bench:deploy
import { helloArtifact, startPier } from './hosting-setup.ts';

const pier = await startPier();
try {
  const warm = await pier.deploy(await helloArtifact('warm-up'));
  const runs: number[] = [];
  for (let i = 0; i < 5; i++) runs.push((await pier.deploy(await helloArtifact(`v${i}`))).ms);
  const sorted = [...runs].sort((a, b) => a - b);
  const median = sorted[2]!;
  console.log(`first deploy (opens the project database): ${warm.ms.toFixed(0)} ms`);
  console.log(`deploys: ${runs.map((r) => r.toFixed(0)).join(', ')} ms`);
  console.log(
    `median startDeploymentForCli → live: ${median.toFixed(0)} ms (target < 3000 ms: ${median < 3000 ? 'met' : 'MISSED'})`,
  );
} finally {
  await pier.stop();
}
