import type { Deps } from '../../deps.ts';
import { auditEvents } from './tables.ts';

/** Records who did what; details must never carry secret values or key material. */
export async function audit(
  deps: Deps,
  actor: { kind: string; id?: string },
  action: string,
  orgId: string | null,
  details: Record<string, unknown> = {},
): Promise<void> {
  await deps.db.orm
    .insert(auditEvents)
    .values({ actorKind: actor.kind, actorId: actor.id, action, orgId, details, at: deps.clock.now() });
}
