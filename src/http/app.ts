import http from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import {
  appSlugFromHost,
  type HostRouter,
  interceptConnections,
  notFoundPage,
} from '../areas/hosting/index.ts';
import { manifests } from '../areas/index.ts';
import type { CallerResolver } from '../core/auth/resolve.ts';
import { DiskBlobStore } from '../core/blobs/disk.ts';
import { errorBody, errors } from '../core/errors.ts';
import type { Deps } from '../deps.ts';
import { AccessLogController } from './access-log.ts';
import { diskBlobRoutes } from './blob-routes.ts';
import { dashboardStaticRoutes } from './dashboard-static.ts';
import { installErrorHandler } from './error-handler.ts';
import { functionApiRoutes } from './fn-route.ts';
import { clientErrorHandler, frameworkErrors, MAX_PARAM_LENGTH, MethodIndex } from './framework-errors.ts';
import { lazyChildLoggerFactory } from './lazy-logger.ts';
import { nextRequestId } from './request-id.ts';
import { checkJsonBody, guardSchemalessParams, surrogateEscapesInUrl, surrogateGuard } from './unicode.ts';
import { v1Routes } from './v1-plugin.ts';
import { wellKnownRoutes } from './well-known.ts';

export type AppOptions = {
  logger?: boolean;
  /** Ways to find a caller besides a bearer header; default: the dashboard's session cookie. */
  callerResolvers?: CallerResolver[];
  /** Where the built dashboard lives (default web/dist). */
  webDist?: string;
  /** Serves app hostnames in front of Fastify (the router role); see docs/operations.md "App hosting". */
  hostRouter?: HostRouter;
};

const REQUEST_ID_RE = /^[A-Za-z0-9._-]{1,128}$/;

/** Builds the HTTP app; no listening, no timers, no workers, so tests can build as many as they like. */
export async function buildApp(deps: Deps, opts: AppOptions = {}): Promise<FastifyInstance> {
  const logController = new AccessLogController();
  const app = Fastify({
    loggerInstance: opts.logger === false ? undefined : deps.log,
    // TRUST_PROXY: whose X-Forwarded-For to believe for req.ip, the address per-IP limits count.
    trustProxy: trustProxyOption(deps.config.trustProxy),
    bodyLimit: 1024 * 1024,
    // A longer path parameter answers 414 (framework-errors.ts).
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // The framework's own refusals answer in the error envelope too (framework-errors.ts).
    frameworkErrors,
    clientErrorHandler,
    rewriteUrl: surrogateEscapesInUrl,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : nextRequestId();
    },
    // Requests arriving while the node drains answer 503 in the error envelope (the onRequest hook below),
    // not in Fastify's own body shape.
    return503OnClosing: false,
    // One access line per request instead of Fastify's two, written by the controller's "request
    // completed" call (access-log.ts) rather than an onResponse hook.
    logController,
    // A request's pino child is made only if something logs through it (most requests do not).
    ...(opts.logger === false ? {} : { childLoggerFactory: lazyChildLoggerFactory }),
    // App hostnames are answered by a plain handler in front of Fastify: no routing, hooks or parsing for
    // proxied traffic, and WebSocket upgrades go straight to the app.
    ...(opts.hostRouter ? { serverFactory: hostRouterServer(opts.hostRouter) } : {}),
  });
  app.setValidatorCompiler(surrogateGuard(validatorCompiler));
  guardSchemalessParams(app);
  const methods = new MethodIndex();
  app.addHook('onRoute', (route) => methods.add(route.method, route.url));
  app.setSerializerCompiler(serializerCompiler);
  app.decorateRequest('caller', null);
  installErrorHandler(app, deps.config.publicUrl);
  // An empty body sent as application/json is an empty object: clients written to the contract send the
  // header on every POST and DELETE, bodiless ones (cancel, resend, compact, deletes) included. Anything
  // else goes through Fastify's own JSON parser (prototype-poisoning checks included).
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '') return done(null, {});
    return parseJson(req, body as string, (err, parsed) => {
      if (err) return done(err);
      try {
        checkJsonBody(body as string, parsed);
      } catch (refusal) {
        return done(refusal as Error);
      }
      done(null, parsed);
    });
  });
  // No cookie plugin: @fastify/cookie adds an onSend hook to every request even with `hook: false`, and Pier
  // only reads the dashboard's session cookie (readCookie in identity/sessions.ts parses it where needed).
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  // Callback-style hooks, and one onRequest hook instead of two: on the hot path each async hook costs a
  // promise and a microtask turn.
  const appsDomain = deps.config.appsDomain;
  const hostSlug = lastValueMemo((host: string | undefined) => appSlugFromHost(host, appsDomain));
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    if (closing) {
      const err = errors.shuttingDown();
      reply.headers(err.headers).status(err.status).send(errorBody(err));
      return;
    }
    // Pier's own routes are never reachable through an app hostname, even on a node without the router.
    const slug = hostSlug(req.headers.host);
    if (slug !== null) {
      notFoundPage(reply.raw, slug);
      reply.hijack();
    }
    done();
  });
  if (opts.logger !== false) logController.writeTo(app.log);

  app.get('/healthz', async () => ({ ok: true }));
  app.get('/readyz', async (_req, reply) => {
    try {
      await deps.db.query('select 1');
      return { ok: true };
    } catch {
      return reply
        .status(503)
        .send(errorBody(errors.unavailable('NOT_READY', 'The database is not reachable.')));
    }
  });

  await app.register(wellKnownRoutes, { publicUrl: deps.config.publicUrl });
  await app.register(functionApiRoutes, { deps, resolvers: opts.callerResolvers ?? defaultResolvers(deps) });
  // Presigned blob URLs point at Pier only with the disk driver; with S3 they point at the object store.
  if (deps.blobs instanceof DiskBlobStore) {
    await app.register(diskBlobRoutes, { store: deps.blobs, corsOrigins: deps.config.blobCorsOrigins });
  }
  await app.register(v1Routes, {
    deps,
    prefix: '/v1',
    groups: manifests().flatMap((a) => a.v1 ?? []),
    plugins: manifests()
      .flatMap((a) => a.v1Plugins ?? [])
      .filter((p) => !p.role || deps.config.roles.includes(p.role)),
  });
  // Every manifest is handed over too: the MCP endpoint derives its tools from all of them.
  for (const area of manifests()) if (area.http) await app.register(area.http, { deps, areas: manifests() });
  await app.register(dashboardStaticRoutes, { dist: opts.webDist });

  app.setNotFoundHandler(async (req, reply) => {
    const path = req.url.split('?')[0]!;
    const allow = methods.allowed(path);
    if (allow.length) {
      reply.header('allow', allow.join(', '));
      return reply
        .status(405)
        .send(errorBody(errors.methodNotAllowed(`Use ${allow.join(' or ')} on ${path}.`)));
    }
    return reply.status(404).send(errorBody(errors.notFound('NOT_FOUND', `${req.method} ${path}`)));
  });
  return app;
}

/** TRUST_PROXY as Fastify takes it: a hop count trusts that many proxies nearest to Pier, whoever they are. */
function trustProxyOption(
  tp: false | number | string[],
): boolean | string[] | ((addr: string, hop: number) => boolean) {
  if (typeof tp === 'number') return (_addr, hop) => hop < tp;
  return tp;
}

/** Each area's way to find a caller besides a bearer header (the dashboard's session cookie). */
function defaultResolvers(deps: Deps): CallerResolver[] {
  return manifests().flatMap((a) => (a.callerResolver ? [a.callerResolver(deps)] : []));
}

/** Remembers the last answer: nearly every request to a node carries the same Host header. */
function lastValueMemo<T>(fn: (key: string | undefined) => T): (key: string | undefined) => T {
  let lastKey: string | undefined;
  let last = fn(undefined);
  return (key) => {
    if (key !== lastKey) {
      last = fn(key);
      lastKey = key;
    }
    return last;
  };
}

function hostRouterServer(router: HostRouter) {
  return (handler: http.RequestListener) => {
    const server = http.createServer((req, res) => {
      if (!router.handle(req, res)) handler(req, res);
    });
    server.on('upgrade', (req, socket, head) => {
      if (!router.upgrade(req, socket, head)) socket.destroy();
    });
    // Every connection's first request is looked at: hand-off, or the spliced proxy path (decisions 020, 081).
    interceptConnections(server, (s, head, host, toServer) => router.takeConnection(s, head, host, toServer));
    const close = server.close.bind(server);
    server.close = ((cb?: (err?: Error) => void) => {
      router.closeConnections();
      return close(cb);
    }) as typeof server.close;
    return server;
  };
}
