import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDb, type TestApp, testApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import { type SmtpSink, startSmtpSink } from '../../../test/smtp-sink.ts';
import type { V1Tenant } from '../../../test/v1-security.ts';
import type { ManualClock } from '../../core/clock.ts';
import type { Db } from '../../core/db/client.ts';
import { claimBatch } from './delivery.ts';
import { SWEEP_AFTER_MS, sweepMail } from './sweeper.ts';
import { deliverBatch, deliverEmail } from './worker.ts';

// Batched delivery's safety properties: the job exists with the e-mail, the sweeper re-queues mail whose
// job is gone (and only that), and stopping the workers loses no outcome.

const base = { from: 'Acme <hello@acme.test>', to: 'ada@example.com', subject: 'Hello', text: 'Hi there' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 20_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe('mail.sweep', () => {
  let t: TestApp;
  let a: V1Tenant;
  beforeAll(async () => {
    t = await testApp({ queue: true });
    a = await seedV1Tenant(t.deps);
  });
  afterAll(async () => {
    await t?.close();
  });
  const send = async () => (await t.v1('POST', '/mail/send', a.live, base)).json() as { id: string };
  const row = async (id: string) =>
    (
      await t.deps.db.query<{ status: string; job_id: string }>(
        'SELECT status, job_id FROM mail_emails WHERE id = $1',
        [id],
      )
    ).rows[0]!;
  const jobState = async (jobId: string) =>
    (await t.deps.jobs.boss.getJobById('mail.deliver', jobId))?.state ?? null;

  it('the delivery job is written with the e-mail and named on it', async () => {
    const email = await send();
    const { job_id } = await row(email.id);
    expect(await jobState(job_id)).toBe('created');
  });

  it('re-queues queued or sending mail whose job is gone, after 5 minutes, and only that', async () => {
    const lost = await send(); // its job vanished (e.g. archived after failing)
    const crashed = await send(); // claimed by a worker that died mid-send
    const alive = await send(); // still has its job
    const recent = await send(); // job gone, but not stuck long enough
    const oldJobs = { lost: (await row(lost.id)).job_id, crashed: (await row(crashed.id)).job_id };
    await claimBatch(t.deps, [{ emailId: crashed.id, jobId: oldJobs.crashed }]);
    for (const id of [oldJobs.lost, oldJobs.crashed])
      await t.deps.db.query('DELETE FROM pgboss.job WHERE id = $1', [id]);
    (t.clock as ManualClock).advance(SWEEP_AFTER_MS + 1000);
    const recentJob = (await row(recent.id)).job_id;
    await t.deps.db.query('DELETE FROM pgboss.job WHERE id = $1', [recentJob]);
    await t.deps.db.query('UPDATE mail_emails SET updated_at = $2 WHERE id = $1', [
      recent.id,
      t.clock.now().toISOString(),
    ]);

    const swept = await sweepMail(t.deps);
    expect(swept.sort()).toEqual([lost.id, crashed.id].sort());
    expect(await sweepMail(t.deps)).toEqual([]); // they have live jobs now
    expect((await row(alive.id)).status).toBe('queued');

    for (const email of [lost, crashed]) {
      const r = await row(email.id);
      expect(r.status).toBe('queued');
      expect(await jobState(r.job_id)).toBe('created');
    }
    // The crashed worker's job cannot claim the e-mail again; its new job can.
    expect((await deliverBatch(t.deps, [{ emailId: crashed.id, jobId: oldJobs.crashed }])).size).toBe(0);
    const now = await deliverBatch(t.deps, [{ emailId: crashed.id, jobId: (await row(crashed.id)).job_id }]);
    expect(now.get(crashed.id)).toBe('delivered');
    const got = (await t.v1('GET', `/mail/emails/${crashed.id}`, a.live)).json();
    expect(got.events.map((e: { type: string }) => e.type)).toEqual([
      'queued',
      'sending',
      'requeued',
      'sending',
      'sent',
      'delivered',
    ]);
    expect(got.events[2].detail).toMatchObject({ reason: 'no live delivery job', after: 'sending' });
    expect(await deliverEmail(t.deps, lost.id)).toBe('delivered');
  });
});

describe('stopping the workers', () => {
  let sink: SmtpSink;
  let db: Db;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    // A slow next hop, so that mails of the batch are still out when the drain starts.
    sink = await startSmtpSink({ keepRaw: false, replyDelayMs: 20 });
    ({ db, drop } = await openTestDb());
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
    await sink?.close();
  });

  it('records the outcome of every mail that went out before the drain finished (SIGTERM)', async () => {
    const env = { SMTP_URL: sink.url, SMTP_IGNORE_TLS: 'true', SMTP_POOL_SIZE: '2' };
    const url = (db as Db & { url?: string }).url;
    const t = await testApp({ db, env: { ...env, ...(url ? { DATABASE_URL: url } : {}) }, background: true });
    const a = await seedV1Tenant(t.deps);
    const emails = Array.from({ length: 60 }, (_, i) => ({ ...base, to: `r${i}@example.com` }));
    const r = await t.v1('POST', '/mail/batch', a.live, { emails });
    expect(r.statusCode, r.body).toBe(200);
    await until('first mails out', async () => sink.received.length >= 5);
    await t.close(); // what main.ts does on SIGTERM: stop taking jobs, finish those in hand, flush outcomes

    const arrived = new Set(sink.received.flatMap((m) => m.to));
    const { rows } = await db.query<{ to_addresses: string[]; status: string }>(
      `SELECT to_addresses, status FROM mail_emails WHERE org_id = $1`,
      [a.org.id],
    );
    expect(rows).toHaveLength(60);
    for (const e of rows) {
      // Sent mail is recorded as sent; nothing is left half-way.
      expect(e.status).toBe(arrived.has(e.to_addresses[0]!) ? 'sent' : 'queued');
    }
    expect(arrived.size).toBe(sink.received.length); // each at most once
    // A mail still queued was never claimed: the drain lets every claimed mail finish (the tail of a batch
    // whose worker already moved on included) instead of cutting it off with the SMTP pool, and nothing is
    // written once the drain is over.
    const events = async () =>
      (
        await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM mail_events e JOIN mail_emails m ON m.id = e.email_id WHERE m.org_id = $1`,
          [a.org.id],
        )
      ).rows[0]!.n;
    const written = await events();
    await new Promise((r) => setTimeout(r, 600));
    expect(await events()).toBe(written);
    const { rows: claimed } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM mail_emails m WHERE m.org_id = $1 AND m.status = 'queued'
         AND EXISTS (SELECT 1 FROM mail_events e WHERE e.email_id = m.id AND e.type <> 'queued')`,
      [a.org.id],
    );
    expect(claimed[0]!.n).toBe(0);
  });
});
