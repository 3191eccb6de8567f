// Mail throughput, each figure beside a baseline measured in the same run:
//  1. accepted sends/s on POST /v1/mail/send (autocannon) vs GET /healthz on the same server;
//  2. delivered mails/s from the mail.deliver workers to a local SMTP sink vs raw nodemailer with the same
//     pool size sending the same messages to the same sink, DKIM-signed with the same key as Pier's.
// Usage: npm run bench:mail [-- --seconds 10 --mails 2000 --rounds 3]  (DATABASE_URL to run on PostgreSQL)
//
// Delivery is measured in steady state: the workers are running and warmed up (a first untimed round), the
// round's mails are accepted scheduled a little ahead (the previous round's acceptance time, three times
// over), so they all become due at one moment while the workers wait; the clock runs from that moment to
// the last mail's arrival at the sink. The queue is used through its API only (JobQueue, pg-boss's public
// API): the workers wake at the due time the inserts announced. Raw nodemailer and Pier alternate, round after round, and the
// median of the rounds' ratios is the figure.
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import nodemailer from 'nodemailer';
import pg from 'pg';
import { tenantSigningKey } from '../src/areas/mail/domains.ts';
import { startBackground } from '../src/background.ts';
import { loadConfig } from '../src/config.ts';
import { Keyring } from '../src/core/crypto.ts';
import { createDeps } from '../src/create-deps.ts';
import type { Deps } from '../src/deps.ts';
import { buildApp } from '../src/http/app.ts';
import { seedV1Tenant } from '../test/seed.ts';
import { startSmtpSink } from '../test/smtp-sink.ts';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const SECONDS = arg('seconds', 10);
const MAILS = arg('mails', 2000);
const POOL = arg('pool', 5);
const ROUNDS = arg('rounds', 3);
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
// `--in-memory`: PGlite without files (the default deployment keeps its database in DATA_DIR).
const deps: Deps = await createDeps(config, {
  keyring: Keyring.random(),
  inMemory: process.argv.includes('--in-memory'),
});
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

// Drop the accepted backlog so the delivery runs measure exactly their own messages.
await deps.db.query(`UPDATE mail_emails SET status = 'cancelled' WHERE status = 'queued'`);
await deps.jobs.purge('mail.deliver');

// 2. Delivering: the same messages, through raw nodemailer and through Pier's workers, in rounds.
const message = (i: number) => ({
  from: 'bench@acme.test',
  to: `r${i}@example.com`,
  subject: `Bench ${i}`,
  text: 'Hello from the benchmark.',
  html: '<p>Hello from the benchmark.</p>',
});
console.log(
  `delivering ${MAILS} mails per run, SMTP pool of ${POOL}, ${ROUNDS} rounds after a warm-up (${deps.db.kind})`,
);

const inspector = PROFILE_DIR ? new Session() : null;
inspector?.connect();
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

/** CPU time of this thread (client, sink, and on PGlite the database), in ms. */
const cpuMs = () => {
  const u = process.threadCpuUsage();
  return (u.user + u.system) / 1000;
};

// What the database costs per delivered mail: statements, and on PGlite the time its WASM engine held the
// event loop (execProtocolRawSync runs one protocol message synchronously), as CPU time.
let statements = 0;
let engineMs = 0;
/**
 * `--sql`: the engine's CPU time in all and by statement (PGlite), printed after the rounds. Off by default:
 * reading the thread's CPU clock around every protocol message costs Pier's side about 2 % more CPU.
 */
const SQL_TIMES = process.argv.includes('--sql');
const bySql = new Map<string, { n: number; ms: number }>();
if (deps.db.pglite) {
  const engine = deps.db.pglite as unknown as { execProtocolRawSync(m: Uint8Array): Uint8Array };
  const sync = engine.execProtocolRawSync.bind(engine);
  let sqlText = '';
  engine.execProtocolRawSync = (m) => {
    // Parse: 'P', length, statement name, query text; Query: 'Q', length, query text.
    if (m[0] === 0x50 || m[0] === 0x51) {
      statements++;
      const start = m[0] === 0x50 ? m.indexOf(0, 5) + 1 : 5;
      sqlText = Buffer.from(m.subarray(start, start + 70))
        .toString()
        .replace(/\s+/g, ' ')
        .trim();
    }
    if (!SQL_TIMES) return sync(m);
    const t = cpuMs();
    try {
      return sync(m);
    } finally {
      const ms = cpuMs() - t;
      engineMs += ms;
      const e = bySql.get(sqlText) ?? { n: 0, ms: 0 };
      if (m[0] === 0x50 || m[0] === 0x51) e.n++;
      e.ms += ms;
      bySql.set(sqlText, e);
    }
  };
} else {
  // Every statement of every pooled client (pool.query goes through client.query too).
  const query = pg.Client.prototype.query as (...a: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...a: unknown[]) {
    statements++;
    return query.apply(this, a);
  } as typeof pg.Client.prototype.query;
}

// The fair baseline signs as Pier does: every bench mail is from the tenant's verified domain, so Pier signs
// it with that domain's RSA-2048 key (rsa-sha256); raw nodemailer signs with the same key.
const dkim = await tenantSigningKey(deps, tenant.org.id, 'acme.test');
if (!dkim) throw new Error('the bench tenant has no signing key for acme.test');
const raw = nodemailer.createTransport({
  url: sink.url,
  pool: true,
  maxConnections: POOL,
  maxMessages: 1000, // as Pier's pool (src/areas/mail/transport.ts)
  ignoreTLS: true,
  dkim,
} as Parameters<typeof nodemailer.createTransport>[0]);
const headers = { authorization: `Bearer ${tenant.live}` };
const accepter = await buildApp(deps, { logger: false });
const stopWorkers = await startBackground(deps, { worker: true });

async function rawRun(n: number): Promise<{ rate: number; cpuMs: number }> {
  sink.received.length = 0;
  const c0 = cpuMs();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: n }, (_, i) => raw.sendMail(message(i))));
  return { rate: n / ((performance.now() - t0) / 1000), cpuMs: cpuMs() - c0 };
}

/** How long the last round took to accept its mails (ms per mail); the next round schedules ahead by it. */
let acceptMsPerMail = 5;

async function pierRun(
  n: number,
): Promise<{ rate: number; recorded: number; statements: number; engineMs: number; cpuMs: number }> {
  sink.received.length = 0;
  const due = Date.now() + Math.max(2000, 3 * acceptMsPerMail * n);
  const later = new Date(due).toISOString();
  const accepting = performance.now();
  const ids: string[] = [];
  for (let i = 0; i < n; i += 100) {
    const emails = Array.from({ length: Math.min(100, n - i) }, (_, k) => ({
      ...message(i + k),
      scheduledAt: later,
    }));
    const r = await accepter.inject({ method: 'POST', url: '/v1/mail/batch', headers, payload: { emails } });
    if (r.statusCode !== 200) throw new Error(r.body);
    ids.push(...(r.json() as { emails: { id: string }[] }).emails.map((e) => e.id));
  }
  acceptMsPerMail = (performance.now() - accepting) / n;
  const wait = due - Date.now();
  if (wait < 0) console.warn(`  accepting overran the due time by ${-wait} ms: this round's rate reads low`);
  await new Promise((r) => setTimeout(r, Math.max(0, wait)));
  const before = { statements, engineMs };
  const c0 = cpuMs();
  // The clock starts at the due time itself, even when this timer fired a little after it.
  const t0 = performance.now() - Math.max(0, Date.now() - due);
  await sink.waitFor(n, 600_000);
  const rate = n / ((performance.now() - t0) / 1000);
  const cost = {
    statements: statements - before.statements,
    engineMs: engineMs - before.engineMs,
    cpuMs: cpuMs() - c0,
  };
  // Until every outcome is recorded too (the last group commit lands after the last mail arrived).
  const sent = async () =>
    (
      await deps.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM mail_emails WHERE id = ANY($1) AND status = 'sent'`,
        [ids],
      )
    ).rows[0]!.n;
  while ((await sent()) < n && performance.now() - t0 < 600_000) await new Promise((r) => setTimeout(r, 5));
  return { rate, recorded: n / ((performance.now() - t0) / 1000), ...cost };
}

// Warm-up: JIT, connections, the workers' first claims and query plans.
await rawRun(Math.min(MAILS, 500));
await pierRun(Math.min(MAILS, 500));

const ratios: number[] = [];
const us = (ms: number) => `${((ms * 1000) / MAILS).toFixed(0)} µs`;
for (let round = 1; round <= ROUNDS; round++) {
  const r = await profile(`raw-${round}`, () => rawRun(MAILS));
  const p = await profile(`pier-${round}`, () => pierRun(MAILS));
  ratios.push(p.rate / r.rate);
  const db = deps.db.pglite && SQL_TIMES ? ` (PGlite engine ${us(p.engineMs)})` : '';
  console.log(
    `  round ${round}: raw nodemailer ${r.rate.toFixed(0)} mails/s, pier ${p.rate.toFixed(0)} mails/s, ratio ${(p.rate / r.rate).toFixed(3)};` +
      ` all recorded as sent at ${p.recorded.toFixed(0)}/s\n` +
      `           CPU per mail: raw ${us(r.cpuMs)}, pier ${us(p.cpuMs)}${db}; ${(p.statements / MAILS).toFixed(3)} statements per mail`,
  );
}
const median = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)]!;
console.log(`  delivered mails/s vs raw nodemailer, median of ${ROUNDS} rounds: ratio ${median.toFixed(3)}`);
if (SQL_TIMES)
  for (const [text, e] of [...bySql].sort((a, b) => b[1].ms - a[1].ms).slice(0, 12))
    console.log(`    ${e.ms.toFixed(0).padStart(6)} ms ${String(e.n).padStart(6)}× ${text}`);

await accepter.close();
raw.close();
await stopWorkers();
await deps.db.close();
await sink.close();
process.exit(0);
