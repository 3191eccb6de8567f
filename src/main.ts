import { ConfigError, loadConfig } from './config.ts';
import { startupProgress } from './startup-progress.ts';

async function serve(): Promise<void> {
  const started = Date.now();
  let config: ReturnType<typeof loadConfig>;
  try {
    // `pier serve --roles proxy` runs only the named roles (same as ROLES=proxy).
    const i = process.argv.indexOf('--roles');
    const roles = i > 0 ? process.argv[i + 1] : undefined;
    config = loadConfig(roles ? { ...process.env, ROLES: roles } : process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  process.stdout.write('Starting Pier…\n');
  const progress = startupProgress();
  // The app's code (~250 modules of ours, ~1,200 of node_modules) loads after the first line, so a slow disk
  // shows as "code" instead of a silent wait.
  progress.step('code', 'loading modules');
  const [{ hostingRuntime }, { ensureOperatorKey }, { wireBrowser }, { startBackground }, cd, log, http] =
    await Promise.all([
      import('./areas/hosting/index.ts'),
      import('./areas/identity/index.ts'),
      import('./areas/webdata/index.ts'),
      import('./background.ts'),
      import('./create-deps.ts'),
      import('./core/log-destination.ts'),
      import('./http/app.ts'),
    ]);
  const deps = await cd.createDeps(config, {
    log: cd.createLogger(config, log.logDestination()),
    progress: (s) =>
      s === 'database'
        ? progress.step(
            'database',
            config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `PGlite in ${config.dataDir}/db`,
          )
        : progress.step('migrations', 'applying what is new'),
  });
  progress.step('keys', 'operator key');
  const operator = await ensureOperatorKey(deps);
  const roles = new Set(config.roles);
  progress.step('browser', 'Chromium pool (started on first use)');
  wireBrowser(deps);
  progress.step('workers', roles.has('worker') ? 'job queue, schedules and workers' : 'job queue');
  const stopBackground = await startBackground(deps, {
    worker: roles.has('worker'),
    router: roles.has('router'),
  });
  progress.step('http', `routes, then listening on ${config.host}:${config.port}`);
  const app = await http.buildApp(deps, { hostRouter: hostingRuntime(deps)?.router });
  await app.listen({ port: config.port, host: config.host });
  progress.done();

  const where = operator.source === 'env' ? 'PIER_OPERATOR_KEY' : operator.file;
  deps.log.info({ url: config.publicUrl, roles: [...roles], ms: Date.now() - started }, 'pier is up');
  flushLog(deps.log); // the log is buffered; the operator should see this line now, not on the next flush
  process.stdout.write(
    `\nPier is running at ${config.publicUrl} (started in ${((Date.now() - started) / 1000).toFixed(1)} s)\n` +
      `  database: ${config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `PGlite in ${config.dataDir}/db`}\n` +
      `  operator key: ${where}\n` +
      `  apps: http://<project>.${config.appsDomain}\n\n`,
  );

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    deps.log.info({ signal }, 'draining');
    flushLog(deps.log);
    const force = setTimeout(() => process.exit(1), config.shutdownGraceMs + 5_000);
    force.unref();
    await app.close(); // stops accepting, waits for in-flight requests
    await stopBackground(); // waits for running jobs
    await deps.db.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

function flushLog(log: unknown): void {
  (log as { flush?: () => void }).flush?.();
}

const [command = 'serve'] = process.argv.slice(2);
if (command === 'serve') {
  serve().catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  console.error(`Unknown command '${command}'. Use: serve`);
  process.exit(2);
}
