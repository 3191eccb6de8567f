import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { restartableTestDb, testApp } from '../../../test/harness.ts';
import { seedV1Tenant } from '../../../test/seed.ts';
import { startSmtpSink } from '../../../test/smtp-sink.ts';
import { systemClock } from '../../core/clock.ts';
import { Keyring } from '../../core/crypto.ts';

// A scheduled e-mail is a pg-boss job in the database: it survives the process stopping, and the worker
// of the next process sends it on time. Real time on purpose (the queue waits by the database clock).

const LEAD_MS = 12_000;

it('a scheduled e-mail survives a restart and goes out within 2 s of scheduledAt', async () => {
  const sink = await startSmtpSink();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-sched-'));
  const keyring = Keyring.random();
  // One database for both processes (PGlite on disk, or one PostgreSQL database), each with its own connection.
  const storage = await restartableTestDb();
  const env = { SMTP_URL: sink.url, SMTP_IGNORE_TLS: 'true' };
  try {
    // First process: accepts the e-mail, then stops before it is due.
    const db1 = await storage.open();
    const first = await testApp({ db: db1, dataDir, env, keyring, clock: systemClock, queue: true });
    const tenant = await seedV1Tenant(first.deps);
    const scheduledAt = new Date(Date.now() + LEAD_MS);
    const sent = await first.v1('POST', '/mail/send', tenant.live, {
      from: 'hello@acme.test',
      to: 'later@example.com',
      subject: 'Reminder',
      text: 'It is time.',
      scheduledAt: scheduledAt.toISOString(),
    });
    expect(sent.json().status).toBe('scheduled');
    await first.close();
    await db1.close();
    expect(sink.received).toHaveLength(0);

    // Second process on the same database, with workers.
    const db2 = await storage.open();
    const second = await testApp({ db: db2, dataDir, env, keyring, clock: systemClock, background: true });
    const readyAt = Date.now();
    try {
      const [msg] = await sink.waitFor(1, LEAD_MS + 20_000);
      expect(msg?.to).toEqual(['later@example.com']);
      // Never early; at most 2 s late (measured from when a worker existed, should boot be slower).
      expect(msg!.at).toBeGreaterThanOrEqual(scheduledAt.getTime() - 50);
      expect(msg!.at - Math.max(scheduledAt.getTime(), readyAt)).toBeLessThanOrEqual(2000);
      // The sink has the message as soon as SMTP accepts it; the worker records `sent` just after that.
      let status = '';
      for (const end = Date.now() + 5000; status !== 'sent' && Date.now() < end; ) {
        status = (await second.v1('GET', `/mail/emails/${sent.json().id}`, tenant.live)).json().status;
        if (status !== 'sent') await new Promise((r) => setTimeout(r, 50));
      }
      expect(status).toBe('sent');
    } finally {
      await second.close();
      await db2.close();
    }
  } finally {
    await storage.drop();
    await sink.close();
  }
}, 90_000);
