import { hostingRuntime } from './areas/hosting/index.ts';
import { ensureOperatorKey } from './areas/identity/index.ts';
import { wireBrowser } from './areas/webdata/index.ts';
import { startBackground } from './background.ts';
import { ConfigError, loadConfig } from './config.ts';
import { logDestination } from './core/log-destination.ts';
import { createDeps, createLogger } from './create-deps.ts';
import { buildApp } from './http/app.ts';

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
  const deps = await createDeps(config, { log: createLogger(config, logDestination()) });
  const operator = await ensureOperatorKey(deps);
  const roles = new Set(config.roles);
  wireBrowser(deps);
  const stopBackground = await startBackground(deps, {
    worker: roles.has('worker'),
    router: roles.has('router'),
  });
  const app = await buildApp(deps, { hostRouter: hostingRuntime(deps)?.router });
  await app.listen({ port: config.port, host: config.host });

  const where = operator.source === 'env' ? 'PIER_OPERATOR_KEY' : operator.file;
  deps.log.info({ url: config.publicUrl, roles: [...roles], ms: Date.now() - started }, 'pier is up');
  flushLog(deps.log); // the log is buffered; the operator should see this line now, not on the next flush
  process.stdout.write(
    `\nPier is running at ${config.publicUrl}\n` +
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
