import { z } from 'zod';

// The zod contract of syncs and synced records (docs/integrations.md, "Syncs"; decision 134).

const id = z.string().min(1).max(300);
export const syncModel = z.enum(['contacts', 'companies', 'deals', 'files']);
const frequencyMinutes = z.number().int().min(5).max(10_080);

export const createSyncBody = z.object({
  connectionId: id,
  model: syncModel,
  /** How often it runs; the first run is due at once. */
  frequencyMinutes: frequencyMinutes.default(60),
});
export const updateSyncBody = z
  .object({ frequencyMinutes: frequencyMinutes.optional(), paused: z.boolean().optional() })
  .refine((b) => b.frequencyMinutes !== undefined || b.paused !== undefined, {
    message: 'Send frequencyMinutes or paused.',
  });
export const syncsQuery = z.object({ connectionId: id.optional() });

export const syncRun = z.object({
  id: z.string(),
  status: z.enum(['running', 'succeeded', 'failed']),
  /** This run went on with a pass an earlier run left unfinished (a crash or a provider failure). */
  resumed: z.boolean(),
  pages: z.number(),
  added: z.number(),
  updated: z.number(),
  deleted: z.number(),
  errorCode: z.string().nullable(),
  error: z.string().nullable(),
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
});
export const sync = z.object({
  id: z.string(),
  connectionId: z.string(),
  model: syncModel,
  frequencyMinutes: z.number(),
  paused: z.boolean(),
  nextRunAt: z.string(),
  lastRunAt: z.string().nullable(),
  /** Records held now (deleted ones not counted). */
  records: z.number(),
  lastRun: syncRun.nullable(),
  createdAt: z.string(),
});
export const syncList = z.object({ data: z.array(sync) });
export const syncRunList = z.object({ data: z.array(syncRun) });
export const syncTriggered = z.object({ queued: z.boolean() });

export const recordsQuery = z.object({
  connectionId: id,
  model: syncModel,
  /** Records added, changed or deleted at or after this time (ISO 8601); all of them without it. */
  modifiedAfter: z.iso.datetime({ offset: true }).optional(),
  /** Include records deleted at the provider (`lastAction: deleted`); left out by default. */
  includeDeleted: z.enum(['true', 'false']).default('false'),
  cursor: z.string().max(4096).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});
export const syncedRecord = z.object({
  id: z.string(),
  lastAction: z.enum(['added', 'updated', 'deleted']),
  firstSeenAt: z.string(),
  /** When Pier saw it added, changed or deleted: what modifiedAfter compares. */
  modifiedAt: z.string(),
  deletedAt: z.string().nullable(),
  /** The unified record (contact, company, deal or file) as last read from the provider, with rawData. */
  record: z.record(z.string(), z.unknown()),
});
export const recordPage = z.object({ data: z.array(syncedRecord), nextCursor: z.string().nullable() });
