import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hostingRuntime } from '../src/areas/hosting/runtime/runtime.ts';
import { issuePersonalToken } from '../src/areas/identity/tokens.ts';
import { ensureUser } from '../src/areas/identity/users.ts';
import { createOrg } from '../src/areas/orgs/orgs.ts';
import { createProject } from '../src/areas/orgs/projects.ts';
import { startBackground } from '../src/background.ts';
import { loadConfig } from '../src/config.ts';
import { createDeps } from '../src/create-deps.ts';
import { buildApp } from '../src/http/app.ts';
import { packDir } from '../test/hosting.ts';

// A real Pier (router + worker roles, embedded PGlite) on a loopback port, one project, and a tiny app.

export const HELLO_APP = {
  'package.json': JSON.stringify({ name: 'hello', private: true, scripts: { start: 'node server.js' } }),
  'server.js':
    "require('node:http').createServer((req, res) => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('hello world'); })" +
    ".listen(Number(process.env.PORT), '127.0.0.1');\n",
};

export async function helloArtifact(version: string): Promise<Buffer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-bench-app-'));
  for (const [f, body] of Object.entries(HELLO_APP)) fs.writeFileSync(path.join(dir, f), body);
  fs.writeFileSync(path.join(dir, 'version.txt'), version);
  return packDir(dir);
}

export async function startPier(env: Record<string, string> = {}) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-bench-'));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', APPS_DOMAIN: 'apps.bench', ...env });
  const deps = await createDeps(config, { inMemory: true });
  const stopBackground = await startBackground(deps, { worker: true, router: true });
  const app = await buildApp(deps, { logger: false, hostRouter: hostingRuntime(deps)!.router });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  const { user } = await ensureUser(deps, 'bench@example.com');
  const { token } = await issuePersonalToken(deps, user.id, 'bench');
  const org = await createOrg(deps, { slug: 'bench-org', name: 'Bench', ownerUserId: user.id });
  const project = await createProject(deps, org, { slug: 'hello', name: 'Hello' });

  const call = async (name: string, body: unknown) => {
    const r = await app.inject({
      method: 'POST',
      url: `/api/fn/${name}`,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    if (r.statusCode !== 200) throw new Error(`${name}: ${r.statusCode} ${r.body}`);
    return r.json();
  };

  /** Uploads and starts a deployment; returns its id and the time startDeploymentForCli was called. */
  const deploy = async (artifact: Buffer) => {
    const created = await call('createDeploymentForCli', { projectSlug: project.slug });
    const u = new URL(created.uploadUrl);
    const put = await app.inject({
      method: 'PUT',
      url: u.pathname + u.search,
      headers: created.uploadHeaders,
      payload: artifact,
    });
    if (put.statusCode !== 200) throw new Error(`upload: ${put.statusCode} ${put.body}`);
    const t0 = performance.now();
    await call('startDeploymentForCli', { deploymentId: created.deploymentId });
    for (;;) {
      const d = await call('getDeploymentForCli', { deploymentId: created.deploymentId });
      if (d.status === 'live') return { id: d.id as string, ms: performance.now() - t0 };
      if (d.status === 'failed') throw new Error(`deploy failed: ${d.errorMessage}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  return {
    deps,
    port,
    project,
    token,
    call,
    dataDir,
    deploy,
    appPort: () => {
      const inst = hostingRuntime(deps)!.supervisor.lookup(project.slug);
      if (inst?.kind !== 'node') throw new Error('no running app');
      return inst.proc.port;
    },
    /** Where the app itself listens for Pier: its Unix socket when sandboxed (decision 066), else null. */
    appSocket: () => {
      const inst = hostingRuntime(deps)!.supervisor.lookup(project.slug);
      if (inst?.kind !== 'node') throw new Error('no running app');
      return inst.proc.socketPath;
    },
    stop: async () => {
      await app.close();
      await stopBackground();
      await deps.db.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
