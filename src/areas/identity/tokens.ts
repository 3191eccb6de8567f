import type { Deps } from '../../deps.ts';

export async function issuePersonalToken(deps: Deps, userId: string, label: string, expiresAt?: Date) {
  return deps.credentials.issue({ kind: 'pk', userId, label, expiresAt });
}
