// Builds from source with the build cache (issue 34): the scaffolded Vite (react-ts) and SvelteKit
// (adapter-node) fixtures, each deployed three times in one run on a fresh Pier:
//   1. first build: empty project caches (npm ci downloads from the registry);
//   2. second build, same lockfile: node_modules and the framework's cache copied from the build cache;
//   3. the same lockfile with the build cache emptied, the npm download cache kept (what Pier did before).
// Prints each build's own time (the manifest's buildMs) and deploy → live, and the ratios 2/1 and 2/3.
// Needs the npm registry. Run: npm run bench:build-cache
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { asc, eq } from 'drizzle-orm';
import { projectDir } from '../src/areas/hosting/runtime/app-databases.ts';
import { hostingRuntime } from '../src/areas/hosting/runtime/runtime.ts';
import { appLogs, deployments } from '../src/areas/hosting/runtime/tables.ts';
import { fixtures, packDir } from '../test/hosting.ts';
import { startPier } from './hosting-setup.ts';

async function artifact(name: string, version: string): Promise<Buffer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-bench-source-'));
  fs.cpSync(path.join(fixtures, 'apps', name), dir, { recursive: true });
  // A changed source file each time (what a redeploy carries); the lockfile stays the same.
  fs.writeFileSync(path.join(dir, 'static-version.txt'), version);
  const buf = await packDir(dir);
  fs.rmSync(dir, { recursive: true, force: true });
  return buf;
}

/**
 * Where a build's time went, from its own log lines' timestamps: "setup" (cache restore, sandbox start) up to
 * the first "> command" line, then each command up to the next, the last one up to "build finished".
 */
async function stepTimes(pier: Awaited<ReturnType<typeof startPier>>, id: string): Promise<string> {
  await hostingRuntime(pier.deps)!.logs.flush();
  const lines = await pier.deps.db.orm
    .select({ ts: appLogs.ts, line: appLogs.line })
    .from(appLogs)
    .where(eq(appLogs.deploymentId, id))
    .orderBy(asc(appLogs.id));
  const marks: [string, number][] = [];
  const start = lines.find((l) => l.line.startsWith('settings exposed to the build'));
  if (start) marks.push(['setup', start.ts.getTime()]);
  for (const l of lines)
    if (l.line.startsWith('> '))
      marks.push([l.line.slice(2).split(/[ :]/).slice(0, 3).join(' '), l.ts.getTime()]);
  const end = lines.find((l) => l.line.startsWith('build finished'));
  if (end) marks.push(['end', end.ts.getTime()]);
  return marks
    .slice(0, -1)
    .map(([name, t], i) => `${name} ${((marks[i + 1]![1] - t) / 1000).toFixed(1)} s`)
    .join(', ');
}

const rows: string[] = [];
for (const name of ['vite-react-ts', 'sveltekit-node']) {
  // getDeploymentForCli is polled every 10 ms through builds of many seconds: above the default rate limit.
  const pier = await startPier({ FN_RATE_LIMIT_PER_SEC: '1000', FN_RATE_LIMIT_IP_PER_SEC: '1000' });
  try {
    await pier.call('setSecretForCli', {
      projectSlug: pier.project.slug,
      key: 'PUBLIC_GREETING',
      value: 'hi',
    });
    await pier.call('setSecretForCli', { projectSlug: pier.project.slug, key: 'VITE_GREETING', value: 'hi' });
    const run = async (version: string) => {
      const { id, ms } = await pier.deploy(await artifact(name, version));
      const [row] = await pier.deps.db.orm.select().from(deployments).where(eq(deployments.id, id));
      console.log(`  ${name} ${version}: ${await stepTimes(pier, id)}`);
      return { build: row!.manifest!.buildMs!, live: ms, hit: !!row!.manifest!.buildCacheHit };
    };
    const first = await run('1');
    const second = await run('2');
    fs.rmSync(path.join(projectDir(pier.deps, pier.project.id), 'build-cache'), {
      recursive: true,
      force: true,
    });
    const npmOnly = await run('3');
    if (!second.hit || first.hit || npmOnly.hit) throw new Error('the build cache was not used as expected');
    const f = (n: number) => `${(n / 1000).toFixed(1)} s`;
    rows.push(
      `${name}: build first ${f(first.build)} (live ${f(first.live)}), second ${f(second.build)} (live ${f(second.live)}), ` +
        `npm cache only ${f(npmOnly.build)} (live ${f(npmOnly.live)}); second/first ${(second.build / first.build).toFixed(2)}×, ` +
        `second/npm-cache-only ${(second.build / npmOnly.build).toFixed(2)}×`,
    );
    console.log(rows.at(-1));
  } finally {
    await pier.stop();
  }
}
