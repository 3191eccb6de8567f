import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../src/config.ts';

// The Pier the HTTP benchmarks measure: DATA_DIR in a temporary folder, the background loops without a
// job worker, a user who owns bench-org (and its project bench-app), and that user's personal token.
// Pier's modules are imported when it starts, not when a bench imports this file, so a bench's parent
// process (the load generator) never loads them.

export type BenchPierOptions = {
  /** The temporary DATA_DIR's name prefix. */
  prefix: string;
  /** Config beyond DATA_DIR, as environment variables. */
  env?: Record<string, string>;
  /** The process logger; the config's default (stdout) when absent. */
  log?: (config: Config) => FastifyBaseLogger;
  /** Create bench-app in bench-org (default true). */
  project?: boolean;
};

export async function startBenchPier(o: BenchPierOptions) {
  const { loadConfig } = await import('../src/config.ts');
  const { createDeps } = await import('../src/create-deps.ts');
  const { buildApp } = await import('../src/http/app.ts');
  const { startBackground } = await import('../src/background.ts');
  const { ensureUser } = await import('../src/areas/identity/users.ts');
  const { createOrg } = await import('../src/areas/orgs/orgs.ts');
  const { createProject } = await import('../src/areas/orgs/projects.ts');
  const { issuePersonalToken } = await import('../src/areas/identity/tokens.ts');

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), o.prefix));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'info', ...o.env });
  const deps = await createDeps(config, o.log ? { log: o.log(config) } : {});
  const stopBackground = await startBackground(deps, { worker: false });
  const { user } = await ensureUser(deps, 'bench@example.com');
  const org = await createOrg(deps, { slug: 'bench-org', name: 'Bench', ownerUserId: user.id });
  if (o.project !== false) await createProject(deps, org, { slug: 'bench-app', name: 'Bench app' });
  const { token } = await issuePersonalToken(deps, user.id, 'bench');
  const app = await buildApp(deps);
  const close = async () => {
    await app.close();
    await stopBackground();
    await deps.db.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  return { deps, app, user, org, token, close };
}
