import { eq } from 'drizzle-orm';
import type { Deps } from '../../../deps.ts';
import { workflowsErrors } from '../errors.ts';
import { workflows } from '../tables.ts';
import { type Fired, fire, inputOf, recordFire } from './fire.ts';

// A call to a workflow's signed inbound webhook URL starts a run of it: the body (JSON, else its text as
// `{ body }`) is the payload; `triggers.webhook.input` can shape the variables from `{ payload, headers }`.

/** Headers a webhook's input expression may read: never the caller's credentials. */
const HIDDEN = new Set(['authorization', 'cookie', 'proxy-authorization']);

export async function startFromWebhook(
  deps: Deps,
  workflowId: string,
  payload: unknown,
  headers: Record<string, unknown>,
): Promise<Fired> {
  const [wf] = await deps.db.orm.select().from(workflows).where(eq(workflows.id, workflowId));
  if (!wf?.triggers.webhook?.enabled) throw workflowsErrors.webhookNotFound();
  const shown = Object.fromEntries(Object.entries(headers).filter(([k]) => !HIDDEN.has(k.toLowerCase())));
  const f = { trigger: 'webhook' as const, ref: 'webhook' };
  let given: Record<string, unknown>;
  try {
    given = await inputOf(wf.triggers.webhook.input, { payload, headers: shown }, payload);
  } catch (err) {
    return recordFire(
      deps.db,
      deps,
      wf,
      f,
      'invalid',
      null,
      `The webhook's input failed: ${(err as Error).message}`,
    );
  }
  return fire(deps, wf, { ...f, given, run: { type: 'webhook', ref: 'webhook' } });
}
