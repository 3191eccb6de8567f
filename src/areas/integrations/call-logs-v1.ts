import { z } from 'zod';
import { defineRoute } from '../../http/v1-kit.ts';
import { KEEP_PER_CONNECTION, listCallLogs } from './call-logs.ts';
import * as S from './schema.ts';

// GET /v1/integrations/connections/{id}/logs: the connection's provider calls, newest first (call-logs.ts).

export const callLog = z.object({
  id: z.string(),
  method: z.string(),
  host: z.string(),
  path: z.string(),
  status: z.number().int().nullable(),
  durationMs: z.number().int(),
  error: z.string().nullable(),
  createdAt: z.string(),
});
export const callLogList = z.object({ data: z.array(callLog) });
export const callLogsLimit = z.coerce.number().int().min(1).max(KEEP_PER_CONNECTION).default(50);

export const callLogsRoute = defineRoute({
  method: 'GET',
  url: '/connections/:id/logs',
  name: 'integrations.connections.logs',
  summary: "A connection's provider calls, newest first",
  description: `Method, host, path (credentials redacted), status (null: no answer, see error), duration; the newest ${KEEP_PER_CONNECTION} are kept.`,
  params: S.idParams,
  query: z.object({ limit: callLogsLimit }),
  response: callLogList,
  errors: ['CONNECTION_NOT_FOUND'],
  handler: async (c, { params, query }) =>
    listCallLogs(
      c.deps,
      { orgId: c.caller.orgId, environment: c.caller.environment },
      params.id,
      query.limit,
    ),
});
