import { safeEqual } from '../../core/crypto.ts';
import { isUuid } from '../../core/ids.ts';
import type { Deps } from '../../deps.ts';

// Signed public URLs of the area: a workflow's inbound webhook and a waiting step's approval link. Each is
// an id and a keyring signature over it (with a purpose, for domain separation), so it needs no API key,
// cannot be forged, and fits Fastify's path-parameter limit. Rotating a workflow's webhook changes its nonce
// and so its signature; an approval's wait row is new each time a step waits, so a link works for one wait.

const short = (deps: Deps, data: string) => deps.keyring.sign(data).slice(0, 22);
const base = (deps: Deps) => deps.config.publicUrl.replace(/\/+$/, '');

export const HOOK_PATH = '/workflows/hooks';
export const APPROVAL_PATH = '/workflows/approvals';

export function webhookUrl(deps: Deps, workflowId: string, nonce: string): string {
  return `${base(deps)}${HOOK_PATH}/${workflowId}.${short(deps, `wf-hook.${workflowId}.${nonce}`)}`;
}

/** The workflow id a webhook token names, when its signature matches the workflow's nonce. */
export async function readHookToken(deps: Deps, token: string): Promise<string | null> {
  const [id, sig, extra] = token.split('.');
  if (!id || !sig || extra !== undefined || !isUuid(id)) return null;
  const { rows } = await deps.db.query<{
    hook_nonce: string | null;
    triggers: { webhook?: { enabled?: boolean } };
  }>('select hook_nonce, triggers from workflows where id = $1', [id]);
  const r = rows[0];
  if (!r?.hook_nonce || !r.triggers.webhook?.enabled) return null;
  return safeEqual(short(deps, `wf-hook.${id}.${r.hook_nonce}`), sig) ? id : null;
}

export function approvalUrl(deps: Deps, waitId: string): string {
  return `${base(deps)}${APPROVAL_PATH}/${waitId}.${short(deps, `wf-approval.${waitId}`)}`;
}

/** The wait id an approval token names, when its signature is this installation's. */
export function readApprovalToken(deps: Deps, token: string): string | null {
  const [id, sig, extra] = token.split('.');
  if (!id || !sig || extra !== undefined || !isUuid(id)) return null;
  return safeEqual(short(deps, `wf-approval.${id}`), sig) ? id : null;
}
