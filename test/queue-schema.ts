import { jobDefs } from '../src/areas/index.ts';
import type { Db } from '../src/core/db/client.ts';
import { JobQueue } from '../src/core/jobs.ts';

/**
 * Creates the job queue's schema and queues in a template database, as every Pier process does at start
 * (src/background.ts), so a test app that does not run the queue can still enqueue: accepting mail (Pier's
 * own verification mail included) inserts its delivery job in the same transaction.
 */
export async function prepareQueueSchema(db: Db): Promise<void> {
  const queue = new JobQueue(db);
  queue.register(jobDefs);
  await queue.start();
  await queue.stop(1000);
}
