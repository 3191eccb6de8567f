import os from 'node:os';
import path from 'node:path';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { type IntegrationClientConfig, loadIntegrationClients } from './config-integrations.ts';
import { loadModelPrices, type ModelPrice } from './config-prices.ts';
import { loadRuntimeDrivers, type RuntimeConfig } from './config-runtime.ts';
import { type OutboundAllow, parseOutboundAllow } from './core/net/outbound-allow.ts';

// Every environment variable Pier reads, parsed once at start-up. Nothing else reads process.env.
const bool = z
  .enum(['true', 'false', '1', '0', 'on', 'off'])
  .transform((v) => ['true', '1', 'on'].includes(v));
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === '' ? undefined : v));

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default('./.pier'),
  PUBLIC_URL: z.url().optional(),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  PIER_SECRET_KEY: z
    .string()
    .regex(/^[A-Za-z0-9_-]{43,}={0,2}$/, 'must be at least 32 bytes, base64url')
    .optional(),
  PIER_OPERATOR_KEY: z
    .string()
    .regex(/^op\.[A-Za-z0-9]+\.[A-Za-z0-9_-]+$/, 'must look like op.<keyId>.<secret>')
    .optional(),
  REGIONS: z
    .string()
    .default('local')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(/^[a-z0-9-]{1,32}$/)).min(1)),
  APPS_DOMAIN: optionalString,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ROLES: z
    .string()
    .default('api,worker,router,proxy')
    .transform((v) => v.split(',').map((s) => s.trim()))
    .pipe(z.array(z.enum(['api', 'worker', 'router', 'proxy'])).min(1)),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000),
  APP_HEALTH_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  APP_CONNECTION_HANDOFF: z.enum(['on', 'off', 'auto']).default('auto'),
  APP_SANDBOX: z.enum(['on', 'off']).default('on'),
  BUILD_TIMEOUT_SEC: z.coerce.number().int().min(1).max(86_400).optional(),
  BUILD_MEMORY_MB: z.coerce.number().int().min(64).max(1_048_576).optional(),
  S3_ENDPOINT: optionalString,
  S3_REGION: z.string().default('us-east-1'),
  S3_BUCKET: optionalString,
  S3_ACCESS_KEY_ID: optionalString,
  S3_SECRET_ACCESS_KEY: optionalString,
  S3_FORCE_PATH_STYLE: bool.default(true),
  /**
   * Origins whose pages may PUT to the disk driver's upload URLs and read `/blobs` and `/cdn` from script:
   * `*` (default: the signed URL is the capability) or a comma list of exact origins.
   */
  BLOB_CORS_ORIGINS: z
    .string()
    .default('*')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim().replace(/\/+$/, ''))
        .filter(Boolean),
    )
    .pipe(
      z
        .array(z.union([z.literal('*'), z.string().regex(/^https?:\/\/[^/\s,]+$/, 'must be an origin')]))
        .min(1),
    ),
  /** ffmpeg and ffprobe for the CDN's media checks and video merges; default: the system's (PATH). */
  FFMPEG_PATH: z.string().min(1).default('ffmpeg'),
  FFPROBE_PATH: z.string().min(1).default('ffprobe'),
  /** Debian's Chromium for screenshots and rendered extraction (src/core/browser); never a downloaded one. */
  CHROMIUM_PATH: z.string().min(1).default('/usr/bin/chromium'),
  BROWSER_MAX_PAGES: z.coerce.number().int().min(1).max(64).default(4),
  BROWSER_RECYCLE_AFTER: z.coerce.number().int().min(1).max(100_000).default(200),
  BROWSER_PAGE_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(30_000),
  V1_RATE_LIMIT_PER_SEC: z.coerce.number().positive().max(100_000).default(20),
  V1_RATE_LIMIT_BURST: z.coerce.number().int().min(1).max(1_000_000).default(100),
  FN_RATE_LIMIT_PER_SEC: z.coerce.number().positive().max(100_000).default(50),
  FN_RATE_LIMIT_BURST: z.coerce.number().int().min(1).max(1_000_000).default(200),
  FN_RATE_LIMIT_IP_PER_SEC: z.coerce.number().positive().max(100_000).default(10),
  FN_RATE_LIMIT_IP_BURST: z.coerce.number().int().min(1).max(1_000_000).default(50),
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  /** Self mail view (docs/decisions/103): `auto` is on without SMTP_URL when PUBLIC_URL is a loopback one. */
  SELF_MAIL: z.enum(['auto', 'on', 'off']).default('auto'),
  SMTP_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(5),
  SMTP_IGNORE_TLS: bool.default(false),
  MAIL_RETRY_DELAYS_SEC: z
    .string()
    .default('30,120,600,1800,7200')
    .transform((v) => v.split(',').map((s) => Number(s.trim())))
    .pipe(z.array(z.number().int().min(0).max(86_400)).min(1).max(20)),
  DKIM_DOMAIN: optionalString,
  DKIM_SELECTOR: optionalString,
  DKIM_PRIVATE_KEY: optionalString,
  /** From of Pier's own mail (address verification, invitations); default no-reply@<DKIM_DOMAIN or host>. */
  SYSTEM_MAIL_FROM: optionalString,
  /** DNS servers for sender-domain checks, `host:port` comma-separated; empty: the system resolver. */
  DNS_SERVERS: optionalString.pipe(
    z
      .string()
      .regex(
        /^\s*[^\s,]+:\d{1,5}\s*(,\s*[^\s,]+:\d{1,5}\s*)*$/,
        'must be host:port, comma-separated (e.g. 127.0.0.1:5353)',
      )
      .optional(),
  ),
  // models (src/core/ai): platform keys per vendor; base URLs let an operator (or a test) point elsewhere
  OPENAI_API_KEY: optionalString,
  OPENAI_BASE_URL: optionalString.pipe(z.url().optional()),
  ANTHROPIC_API_KEY: optionalString,
  ANTHROPIC_BASE_URL: optionalString.pipe(z.url().optional()),
  GOOGLE_API_KEY: optionalString,
  GOOGLE_BASE_URL: optionalString.pipe(z.url().optional()),
  MISTRAL_API_KEY: optionalString,
  MISTRAL_BASE_URL: optionalString.pipe(z.url().optional()),
  PIER_MODELS_URL: optionalString.pipe(z.url().optional()),
  PIER_MODELS_KEY: optionalString,
  EMBEDDING_MODEL: optionalString.pipe(
    z
      .string()
      .regex(/^(openai|anthropic|google|mistral|pier|pier-local)\/.+$/, 'must look like <provider>/<model>')
      .optional(),
  ),
  TEXT_MODEL: optionalString.pipe(
    z
      .string()
      .regex(/^(openai|anthropic|google|mistral|pier)\/.+$/, 'must look like <provider>/<model>')
      .optional(),
  ),
  MODEL_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  MODEL_RETRY_BASE_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  MODEL_TIMEOUT_MS: z.coerce.number().int().min(1000).default(120_000),
  /** Price overrides, USD per 1M tokens (src/config-prices.ts; docs/models.md, "Spend"). */
  MODEL_PRICES: optionalString,
  MODEL_PRICES_FILE: optionalString,
  SIGNUP: z.enum(['on', 'off']).default('on'),
  // Private hosts/CIDRs outbound requests may reach (src/core/net/outbound-allow.ts); metadata never.
  OUTBOUND_ALLOW: z
    .string()
    .default('')
    .transform((raw, ctx) => {
      const { allow, problems } = parseOutboundAllow(raw);
      for (const message of problems) ctx.addIssue({ code: 'custom', message });
      return allow;
    }),
  // Web data: one page fetch's time limit, and how many requests a crawl sends to one site at once.
  WEBDATA_FETCH_TIMEOUT_MS: z.coerce.number().int().min(500).max(300_000).default(20_000),
  WEBDATA_CRAWL_CONCURRENCY: z.coerce.number().int().min(1).max(32).default(4),
  // Threads a crawl converts pages in (HTML → markdown is the CPU cost on real pages); unset = the cores
  // this process may use, at most 4; 0 converts on the main thread.
  WEBDATA_CONVERT_THREADS: z.coerce.number().int().min(0).max(32).optional(),
  WEBDATA_TESSERACT: z.string().max(500).default('tesseract'),
  // Which proxies in front may tell the client's address (X-Forwarded-For): `off`, a hop count, or the
  // proxies' addresses/CIDRs, comma-separated.
  TRUST_PROXY: z
    .string()
    .trim()
    .default('off')
    .transform((v, ctx): false | number | string[] => {
      if (v === '' || v === 'off') return false;
      if (/^\d+$/.test(v)) {
        const hops = Number(v);
        if (hops >= 1 && hops <= 10) return hops;
        ctx.addIssue({ code: 'custom', message: 'a hop count is 1 to 10 (or off)' });
        return z.NEVER;
      }
      const list = v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const bad = list.filter((s) => !(ipaddr.isValid(s) || ipaddr.isValidCIDR(s)));
      if (bad.length === 0 && list.length > 0) return list;
      ctx.addIssue({
        code: 'custom',
        message: `expected off, a hop count or comma-separated addresses/CIDRs; not an address: ${bad.join(', ')}`,
      });
      return z.NEVER;
    }),
  // Cron has minute precision and `*/N` restarts at each hour, so only divisors of 60 keep a steady interval.
  PGLITE_MAINTENANCE_INTERVAL_MIN: z.coerce
    .number()
    .int()
    .refine((n) => n === 0 || (n > 0 && n <= 60 && 60 % n === 0), 'must be 0 (off) or a divisor of 60')
    .default(1),
  // workflows (docs/workflows.md): step leases, worker slots, the per-run parallel cap, price overrides
  WORKFLOW_LEASE_MS: z.coerce.number().int().min(500).max(600_000).default(10_000),
  WORKFLOW_WORKER_SLOTS: z.coerce.number().int().min(1).max(64).default(8),
  WORKFLOW_RUN_PARALLELISM: z.coerce.number().int().min(1).max(64).default(4),
  // The largest output (JSON) a step, and all of a run's steps together, may store.
  WORKFLOW_STEP_OUTPUT_MAX_KB: z.coerce.number().int().min(1).max(65_536).default(1024),
  WORKFLOW_RUN_OUTPUT_MAX_KB: z.coerce.number().int().min(1).max(1_048_576).default(10_240),
  WORKFLOW_EVENT_RETENTION_HOURS: z.coerce.number().min(0.01).max(8760).default(24),
  WORKFLOW_PRICES: optionalString.pipe(
    z
      .string()
      .transform((s, ctx) => {
        try {
          return z.record(z.string(), z.number().min(0)).parse(JSON.parse(s));
        } catch {
          ctx.addIssue({ code: 'custom', message: 'must be a JSON object of price names to numbers' });
          return z.NEVER;
        }
      })
      .optional(),
  ),
});

export type Config = {
  port: number;
  host: string;
  dataDir: string;
  publicUrl: string;
  databaseUrl?: string;
  secretKey?: string;
  operatorKey?: string;
  regions: string[];
  /** Which runtime driver serves each region, and the Kubernetes driver's settings (config-runtime.ts). */
  runtime: RuntimeConfig;
  appsDomain: string;
  logLevel: z.infer<typeof envSchema>['LOG_LEVEL'];
  roles: z.infer<typeof envSchema>['ROLES'];
  shutdownGraceMs: number;
  /**
   * OUTBOUND_ALLOW: private ranges and host names that outbound requests to user-supplied or provider URLs
   * (webhooks, integrations, …) may reach; pass it to every safeFetch. Empty by default.
   */
  outboundAllow: OutboundAllow;
  /**
   * Web data: WEBDATA_FETCH_TIMEOUT_MS, WEBDATA_CRAWL_CONCURRENCY (requests at once per crawled site) and
   * WEBDATA_CONVERT_THREADS (a crawl's conversion threads), WEBDATA_TESSERACT (the OCR binary for scanned
   * PDFs; empty turns OCR off).
   */
  webdata: { fetchTimeoutMs: number; crawlConcurrency: number; convertThreads: number; tesseract: string };
  /**
   * Integrations: per connector, the operator's OAuth client (a connector without one cannot be connected)
   * and URL overrides (gateways, regional hosts, tests). Secrets: never logged.
   */
  integrations: Record<string, IntegrationClientConfig>;
  /** Whether anyone may sign up in the dashboard (SIGNUP=off: only invited users). */
  signup: boolean;
  /**
   * TRUST_PROXY: false (the socket address is the client), a number of proxy hops in front, or the proxies'
   * addresses/CIDRs. Decides the client address every per-IP limit counts (Fastify's trustProxy).
   */
  trustProxy: false | number | string[];
  /** How long a new app version has to pass its health check before the deploy fails. */
  appHealthTimeoutMs: number;
  /**
   * Hand client connections to Node apps instead of proxying each request (docs/decisions/020). `auto` (the
   * default) is on unless PUBLIC_URL is https: Pier serves plain HTTP, so then a proxy sits in front, and a
   * pooling proxy mixes hostnames on one connection.
   */
  appConnectionHandoff: boolean;
  /**
   * Run every app process in a bubblewrap sandbox (docs/decisions/035-sandbox-hosted-apps.md). `off` only for machines
   * without bwrap or user namespaces: apps then see Pier's files, and a warning is logged at every start.
   */
  appSandbox: boolean;
  /**
   * The operator's ceiling on a build's time (BUILD_TIMEOUT_SEC); the plan's own allowance applies under it
   * (orgs/plans.ts `build`). Unset: the plan's.
   */
  buildTimeoutMs?: number;
  /** BUILD_MEMORY_MB: every build's memory limit instead of the plan's (an operator's override). */
  buildMemoryMb?: number;
  s3?: {
    endpoint?: string;
    region: string;
    bucket: string;
    accessKeyId?: string;
    secretAccessKey?: string;
    forcePathStyle: boolean;
  };
  /** Per API key token bucket of the v1 API: sustained requests per second and burst size. */
  v1RateLimit: { perSec: number; burst: number };
  /** The function API's buckets: per credential, and per client address for calls without one. */
  fnRateLimit: { perCredential: { perSec: number; burst: number }; perIp: { perSec: number; burst: number } };
  /** Outbound mail; without it mail goes to the built-in outbox (dev inbox). */
  smtp?: { url: string; poolSize: number; ignoreTls: boolean };
  /** Without SMTP: a signed-in person may read Pier's own mail to their address (docs/decisions/103). */
  selfMail: boolean;
  /** Delays before each retry of a temporary SMTP failure; the last failure after them is final. */
  mailRetryDelaysSec: number[];
  dkim?: { domain: string; selector: string; privateKey: string };
  /** The From of Pier's own mail (verification links, invitations). */
  systemMailFrom: string;
  /** DNS servers (`host:port`) for sender-domain verification; empty: the system resolver. */
  dnsServers: string[];
  models: ModelsConfig;
  /**
   * Minutes between VACUUM/ANALYZE passes on PGlite, which has no autovacuum (docs/decisions/026); 0 turns
   * them off. Ignored on PostgreSQL.
   */
  pgliteMaintenanceIntervalMin: number;
  /** Media tools of the CDN (probing uploads, merging videos). */
  media: { ffmpegPath: string; ffprobePath: string };
  /** Origins allowed by CORS on `/blobs/*` and `/cdn/*` ('*': any). */
  blobCorsOrigins: '*' | string[];
  /** Workflow runs: step lease, steps one worker process runs at once, per-run cap, price overrides. */
  workflows: {
    leaseMs: number;
    workerSlots: number;
    runParallelism: number;
    stepOutputMaxBytes: number;
    runOutputMaxBytes: number;
    /** How long received events are kept for waits that begin after them. */
    eventRetentionMs: number;
    prices: Record<string, number>;
  };
  /** The shared Chromium pool (src/core/browser/pool.ts). */
  browser: { executablePath: string; maxPages: number; recycleAfter: number; pageTimeoutMs: number };
};

export type { IntegrationClientConfig };

export type VendorId = 'openai' | 'anthropic' | 'google' | 'mistral';

/** Platform-level model settings; the keys are secrets and must never be logged. */
export type ModelsConfig = {
  vendors: Record<VendorId, { apiKey?: string; baseUrl?: string }>;
  /** The operator's own OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp server): provider `pier`. */
  pier?: { baseUrl: string; apiKey?: string };
  /** `<provider>/<model>` used by embed(); unset → the built-in local embedder. */
  embeddingModel?: string;
  /** `<provider>/<model>` used by summarize() and extract(); unset → the deterministic fallbacks. */
  textModel?: string;
  maxRetries: number;
  retryBaseMs: number;
  timeoutMs: number;
  /** The operator's price overrides by `provider/model` prefix (the built-in table: models/prices.ts). */
  prices: Record<string, ModelPrice>;
};

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.problems = problems;
  }
}

/** The host after `no-reply@`: the public host name, or `localhost` for an IP address or a dotless name. */
function mailHost(publicUrl: string): string {
  const host = new URL(publicUrl).hostname;
  return /^[a-z0-9-]+(\.[a-z0-9-]+)+$/i.test(host) && !/^[\d.]+$/.test(host) ? host : 'localhost';
}

/** A PUBLIC_URL only this machine reaches: whoever signs up there is the operator or sits at their desk. */
function isLoopback(publicUrl: string): boolean {
  const host = new URL(publicUrl).hostname;
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Parses the environment; throws a ConfigError listing every bad variable at once. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  const e = parsed.data;
  const dkimParts = [e.DKIM_DOMAIN, e.DKIM_SELECTOR, e.DKIM_PRIVATE_KEY];
  if (dkimParts.some(Boolean) && !dkimParts.every(Boolean)) {
    throw new ConfigError(['DKIM_DOMAIN, DKIM_SELECTOR and DKIM_PRIVATE_KEY: set all three or none']);
  }
  const modelPrices = loadModelPrices(e);
  if (modelPrices.problems.length) throw new ConfigError(modelPrices.problems);
  const integrationClients = loadIntegrationClients(env);
  if (integrationClients.problems.length) throw new ConfigError(integrationClients.problems);
  const runtime = loadRuntimeDrivers(env, e.REGIONS, e.DATABASE_URL);
  if (runtime.problems.length) throw new ConfigError(runtime.problems);
  const publicUrl = (
    e.PUBLIC_URL ?? `http://${e.HOST === '0.0.0.0' ? '127.0.0.1' : e.HOST}:${e.PORT}`
  ).replace(/\/+$/, '');
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: path.resolve(e.DATA_DIR),
    publicUrl,
    databaseUrl: e.DATABASE_URL,
    secretKey: e.PIER_SECRET_KEY,
    operatorKey: e.PIER_OPERATOR_KEY,
    regions: e.REGIONS,
    runtime: runtime.runtime,
    appsDomain: e.APPS_DOMAIN ?? `localhost:${e.PORT}`,
    logLevel: e.LOG_LEVEL,
    roles: e.ROLES,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    signup: e.SIGNUP === 'on',
    outboundAllow: e.OUTBOUND_ALLOW,
    webdata: {
      fetchTimeoutMs: e.WEBDATA_FETCH_TIMEOUT_MS,
      crawlConcurrency: e.WEBDATA_CRAWL_CONCURRENCY,
      convertThreads: e.WEBDATA_CONVERT_THREADS ?? Math.min(4, os.availableParallelism()),
      tesseract: e.WEBDATA_TESSERACT,
    },
    integrations: integrationClients.clients,
    trustProxy: e.TRUST_PROXY,
    appHealthTimeoutMs: e.APP_HEALTH_TIMEOUT_MS,
    appConnectionHandoff:
      e.APP_CONNECTION_HANDOFF === 'auto'
        ? !publicUrl.startsWith('https:')
        : e.APP_CONNECTION_HANDOFF === 'on',
    appSandbox: e.APP_SANDBOX === 'on',
    buildTimeoutMs: e.BUILD_TIMEOUT_SEC === undefined ? undefined : e.BUILD_TIMEOUT_SEC * 1000,
    buildMemoryMb: e.BUILD_MEMORY_MB,
    s3: e.S3_BUCKET
      ? {
          endpoint: e.S3_ENDPOINT,
          region: e.S3_REGION,
          bucket: e.S3_BUCKET,
          accessKeyId: e.S3_ACCESS_KEY_ID,
          secretAccessKey: e.S3_SECRET_ACCESS_KEY,
          forcePathStyle: e.S3_FORCE_PATH_STYLE,
        }
      : undefined,
    v1RateLimit: { perSec: e.V1_RATE_LIMIT_PER_SEC, burst: e.V1_RATE_LIMIT_BURST },
    fnRateLimit: {
      perCredential: { perSec: e.FN_RATE_LIMIT_PER_SEC, burst: e.FN_RATE_LIMIT_BURST },
      perIp: { perSec: e.FN_RATE_LIMIT_IP_PER_SEC, burst: e.FN_RATE_LIMIT_IP_BURST },
    },
    smtp: e.SMTP_URL
      ? { url: e.SMTP_URL, poolSize: e.SMTP_POOL_SIZE, ignoreTls: e.SMTP_IGNORE_TLS }
      : undefined,
    selfMail: !e.SMTP_URL && (e.SELF_MAIL === 'on' || (e.SELF_MAIL === 'auto' && isLoopback(publicUrl))),
    mailRetryDelaysSec: e.MAIL_RETRY_DELAYS_SEC,
    media: { ffmpegPath: e.FFMPEG_PATH, ffprobePath: e.FFPROBE_PATH },
    blobCorsOrigins: e.BLOB_CORS_ORIGINS.includes('*') ? '*' : e.BLOB_CORS_ORIGINS,
    browser: {
      executablePath: e.CHROMIUM_PATH,
      maxPages: e.BROWSER_MAX_PAGES,
      recycleAfter: e.BROWSER_RECYCLE_AFTER,
      pageTimeoutMs: e.BROWSER_PAGE_TIMEOUT_MS,
    },
    dkim:
      e.DKIM_DOMAIN && e.DKIM_SELECTOR && e.DKIM_PRIVATE_KEY
        ? {
            domain: e.DKIM_DOMAIN,
            selector: e.DKIM_SELECTOR,
            // PEM keys in one env line often carry literal \n.
            privateKey: e.DKIM_PRIVATE_KEY.replace(/\\n/g, '\n'),
          }
        : undefined,
    systemMailFrom: e.SYSTEM_MAIL_FROM ?? `Pier <no-reply@${e.DKIM_DOMAIN ?? mailHost(publicUrl)}>`,
    dnsServers: e.DNS_SERVERS ? e.DNS_SERVERS.split(',').map((s) => s.trim()) : [],
    models: {
      vendors: {
        openai: { apiKey: e.OPENAI_API_KEY, baseUrl: e.OPENAI_BASE_URL },
        anthropic: { apiKey: e.ANTHROPIC_API_KEY, baseUrl: e.ANTHROPIC_BASE_URL },
        google: { apiKey: e.GOOGLE_API_KEY, baseUrl: e.GOOGLE_BASE_URL },
        mistral: { apiKey: e.MISTRAL_API_KEY, baseUrl: e.MISTRAL_BASE_URL },
      },
      pier: e.PIER_MODELS_URL ? { baseUrl: e.PIER_MODELS_URL, apiKey: e.PIER_MODELS_KEY } : undefined,
      embeddingModel: e.EMBEDDING_MODEL,
      textModel: e.TEXT_MODEL,
      maxRetries: e.MODEL_MAX_RETRIES,
      retryBaseMs: e.MODEL_RETRY_BASE_MS,
      timeoutMs: e.MODEL_TIMEOUT_MS,
      prices: modelPrices.prices,
    },
    pgliteMaintenanceIntervalMin: e.PGLITE_MAINTENANCE_INTERVAL_MIN,
    workflows: {
      leaseMs: e.WORKFLOW_LEASE_MS,
      workerSlots: e.WORKFLOW_WORKER_SLOTS,
      runParallelism: e.WORKFLOW_RUN_PARALLELISM,
      stepOutputMaxBytes: e.WORKFLOW_STEP_OUTPUT_MAX_KB * 1024,
      runOutputMaxBytes: e.WORKFLOW_RUN_OUTPUT_MAX_KB * 1024,
      eventRetentionMs: e.WORKFLOW_EVENT_RETENTION_HOURS * 3_600_000,
      prices: e.WORKFLOW_PRICES ?? {},
    },
  };
}
