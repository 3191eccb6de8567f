import { z } from 'zod';
import { defineJob } from '../../core/jobs.ts';
import type { Deps } from '../../deps.ts';

// The safety net under delivery: an e-mail `queued` or `sending` for more than SWEEP_AFTER_MS whose
// delivery job is gone (the job expired or failed with its worker, a flush of outcomes failed, or the row
// predates job ids) gets a new job and goes back to `queued` with a `requeued` event. A mail that was
// handed to the SMTP server but whose outcome was never written is therefore sent again: delivery is
// at-least-once (docs/mail.md). Older jobs of a re-queued e-mail can no longer claim it (delivery.ts).

export const MAIL_SWEEP_JOB = 'mail.sweep';
export const MAIL_SWEEP_CRON = '* * * * *';
export const SWEEP_AFTER_MS = 5 * 60_000;
const SWEEP_LIMIT = 1000;

const STALE_SQL = `
SELECT m.id, m.status FROM mail_emails m
WHERE m.status IN ('queued', 'sending') AND m.updated_at < $1
  AND NOT EXISTS (
    SELECT 1 FROM pgboss.job j
    WHERE j.name = 'mail.deliver' AND j.id = m.job_id AND j.state < 'completed'
  )
ORDER BY m.updated_at
LIMIT ${SWEEP_LIMIT}
FOR UPDATE OF m SKIP LOCKED`;

// Guarded by the same status and age, so an e-mail that moved on meanwhile is left alone.
const REQUEUE_SQL = `
WITH v AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS v(id uuid, job_id uuid)
), u AS (
  UPDATE mail_emails m SET status = 'queued', job_id = v.job_id, updated_at = $2
  FROM v WHERE m.id = v.id AND m.status IN ('queued', 'sending') AND m.updated_at < $3
  RETURNING m.id, (SELECT e.type FROM mail_events e WHERE e.email_id = m.id ORDER BY e.seq DESC LIMIT 1) AS last
)
INSERT INTO mail_events (email_id, type, at, detail)
SELECT u.id, 'requeued', $2, jsonb_build_object('reason', 'no live delivery job', 'after', u.last) FROM u
RETURNING email_id`;

/** Re-queues stuck e-mails; returns their ids. */
export async function sweepMail(deps: Deps): Promise<string[]> {
  const now = deps.clock.now();
  const before = new Date(now.getTime() - SWEEP_AFTER_MS).toISOString();
  return deps.db.transaction(async (tx) => {
    const { rows } = await tx.query<{ id: string }>(STALE_SQL, [before]);
    if (!rows.length) return [];
    const items = rows.map((r) => ({ id: r.id, job_id: crypto.randomUUID() }));
    const done = await tx.query<{ email_id: string }>(REQUEUE_SQL, [
      JSON.stringify(items),
      now.toISOString(),
      before,
    ]);
    const requeued = new Set(done.rows.map((r) => r.email_id));
    await deps.jobs.insert(
      items
        .filter((i) => requeued.has(i.id))
        .map((i) => ({ name: 'mail.deliver' as const, id: i.job_id, data: { emailId: i.id } })),
      { tx },
    );
    return [...requeued];
  });
}

export const mailSweepJob = defineJob({
  name: MAIL_SWEEP_JOB,
  schema: z.object({}),
  cronOnly: true,
  handle: async (_data, { deps }: { deps: Deps }) => {
    await sweepMail(deps);
  },
});
