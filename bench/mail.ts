// Mail throughput, each figure beside a baseline measured in the same run:
//  1. accepted sends/s on POST /v1/mail/send (autocannon) vs GET /healthz on the same server;
//  2. delivered mails/s from the mail.deliver workers to a local SMTP sink vs raw nodemailer with the same
//     pool size sending the same messages to the same sink.
// Usage: npm run bench:mail [-- --seconds 10 --mails 2000]  (DATABASE_URL to run on PostgreSQL)
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import nodemailer from 'nodemailer';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { startBackground } from '../src/background.ts';
import { loadConfig } from '../src/config.ts';
import { Keyring } from '../src/core/crypto.ts';
import { createDeps, type Deps } from '../src/deps.ts';
import { seedV1Tenant } from '../test/seed.ts';
import { startSmtpSink } from '../test/smtp-sink.ts';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const SECONDS = arg('seconds', 10);
const MAILS = arg('mails', 2000);
const POOL = arg('pool', 5);
/** `--profile DIR`: CPU profiles of both delivery runs (raw.cpuprofile, pier.cpuprofile). */
const PROFILE_DIR = (() => {
  const i = process.argv.indexOf('--profile');
  return i > 0 ? process.argv[i + 1] : undefined;
})();
/** `--delivery-only`: skip the accepted-sends figure (profiling the workers). */
const DELIVERY_ONLY = process.argv.includes('--delivery-only');

const sink = await startSmtpSink({ keepRaw: false });
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-bench-mail-'));
const config = loadConfig({
  DATA_DIR: dataDir,
  LOG_LEVEL: 'silent',
  PORT: '0',
  V1_RATE_LIMIT_BURST: '1000000',
  V1_RATE_LIMIT_PER_SEC: '100000',
  SMTP_URL: sink.url,
  SMTP_IGNORE_TLS: 'true',
  SMTP_POOL_SIZE: String(POOL),
  ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
});
const deps: Deps = await createDeps(config, { keyring: Keyring.random(), inMemory: true });
await deps.jobs.start();
const app = await buildApp(deps, { logger: false });
await app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
const tenant = await seedV1Tenant(deps);

// autocannon ships no types; only its documented result fields are used.
type CannonResult = { non2xx: number; requests: { average: number } };
const autocannonModule = 'autocannon';
const autocannon = (await import(autocannonModule)).default as (o: object) => Promise<CannonResult>;

async function cannon(opts: Record<string, unknown>): Promise<number> {
  const r = await autocannon({ connections: 16, duration: SECONDS, ...opts });
  if (r.non2xx) console.warn(`  ${r.non2xx} non-2xx answers`);
  return r.requests.average;
}

// 1. Accepting sends.
if (!DELIVERY_ONLY) {
  console.log(`accepting: ${SECONDS} s each, 16 connections (${deps.db.kind})`);
  const health = await cannon({ url: `${base}/healthz` });
  const body = JSON.stringify({
    from: 'bench@acme.test',
    to: 'sink@example.com',
    subject: 'Bench',
    text: 'Hello',
  });
  const sends = await cannon({
    url: `${base}/v1/mail/send`,
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.live}`, 'content-type': 'application/json' },
    body,
  });
  console.log(`  GET /healthz        ${health.toFixed(0)} req/s (baseline)`);
  console.log(`  POST /v1/mail/send  ${sends.toFixed(0)} req/s  ratio ${(sends / health).toFixed(3)}`);
}
await app.close();

// Drop the accepted backlog so the delivery run measures exactly MAILS messages.
await deps.db.query(`UPDATE mail_emails SET status = 'cancelled' WHERE status = 'queued'`);

// 2. Delivering: the same messages, once through raw nodemailer, once through Pier's workers.
const message = (i: number) => ({
  from: 'bench@acme.test',
  to: `r${i}@example.com`,
  subject: `Bench ${i}`,
  text: 'Hello from the benchmark.',
  html: '<p>Hello from the benchmark.</p>',
});
console.log(`delivering ${MAILS} mails, SMTP pool of ${POOL}`);

sink.received.length = 0;
const raw = nodemailer.createTransport({
  url: sink.url,
  pool: true,
  maxConnections: POOL,
  maxMessages: 1000,
  ignoreTLS: true,
} as Parameters<typeof nodemailer.createTransport>[0]);
const inspector = PROFILE_DIR ? new Session() : null;
async function profile<T>(name: string, run: () => Promise<T>): Promise<T> {
  if (!inspector || !PROFILE_DIR) return run();
  await inspector.post('Profiler.enable');
  await inspector.post('Profiler.start');
  const out = await run();
  const { profile: p } = await inspector.post('Profiler.stop');
  fs.mkdirSync(PROFILE_DIR, { recursive: true });
  fs.writeFileSync(path.join(PROFILE_DIR, `${name}.cpuprofile`), JSON.stringify(p));
  return out;
}
inspector?.connect();

// Statements per delivered mail: every SQL text the database driver runs during the delivery run.
let statements = 0;
const countStatements = () => {
  if (deps.db.pglite) {
    const pg = deps.db.pglite;
    const query = pg.query.bind(pg);
    const exec = pg.exec.bind(pg);
    pg.query = ((...a: Parameters<typeof query>) => {
      statements++;
      return query(...a);
    }) as typeof pg.query;
    pg.exec = ((...a: Parameters<typeof exec>) => {
      statements++;
      return exec(...a);
    }) as typeof pg.exec;
    const transaction = pg.transaction.bind(pg);
    pg.transaction = ((fn: Parameters<typeof transaction>[0]) =>
      transaction((tx) => {
        const txQuery = tx.query.bind(tx);
        tx.query = ((...a: Parameters<typeof txQuery>) => {
          statements++;
          return txQuery(...a);
        }) as typeof tx.query;
        return fn(tx);
      })) as typeof pg.transaction;
  } else {
    // Every statement of every pooled client (pool.query goes through client.query too).
    const query = pg.Client.prototype.query as (...a: unknown[]) => unknown;
    pg.Client.prototype.query = function (this: pg.Client, ...a: unknown[]) {
      statements++;
      return query.apply(this, a);
    } as typeof pg.Client.prototype.query;
  }
};

let t0 = performance.now();
await profile('raw', () => Promise.all(Array.from({ length: MAILS }, (_, i) => raw.sendMail(message(i)))));
const rawRate = MAILS / ((performance.now() - t0) / 1000);
raw.close();

sink.received.length = 0;
const headers = { authorization: `Bearer ${tenant.live}` };
const accepter = await buildApp(deps, { logger: false });
for (let i = 0; i < MAILS; i += 100) {
  const emails = Array.from({ length: Math.min(100, MAILS - i) }, (_, k) => message(i + k));
  const r = await accepter.inject({ method: 'POST', url: '/v1/mail/batch', headers, payload: { emails } });
  if (r.statusCode !== 200) throw new Error(r.body);
}
await accepter.close();
await deps.jobs.stop();
countStatements();
t0 = performance.now();
const { stop, pierRate } = await profile('pier', async () => {
  const stop = await startBackground(deps, { worker: true });
  await sink.waitFor(MAILS, 600_000);
  return { stop, pierRate: MAILS / ((performance.now() - t0) / 1000) };
});
const counted = statements;
// Until every outcome is recorded too (the last group commit lands after the last mail arrived).
const sentCount = async () =>
  (await deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM mail_emails WHERE status = 'sent'`))
    .rows[0]!.n;
let marked = await sentCount();
while (marked < MAILS && performance.now() - t0 < 600_000) {
  await new Promise((r) => setTimeout(r, 10));
  marked = await sentCount();
}
const recordedRate = MAILS / ((performance.now() - t0) / 1000);
console.log(`  raw nodemailer      ${rawRate.toFixed(0)} mails/s (baseline)`);
console.log(`  pier mail.deliver   ${pierRate.toFixed(0)} mails/s  ratio ${(pierRate / rawRate).toFixed(3)}`);
console.log(
  `    all ${marked} recorded as sent at ${recordedRate.toFixed(0)} mails/s (ratio ${(recordedRate / rawRate).toFixed(3)}); ${(counted / MAILS).toFixed(2)} SQL statements per mail (worker start included)`,
);

await stop();
await deps.db.close();
await sink.close();
process.exit(0);
