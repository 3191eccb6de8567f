import fs from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { parseCredential } from '../../core/auth/format.ts';
import { credentials } from '../../core/auth/tables.ts';
import type { Deps } from '../../deps.ts';

/**
 * Makes sure an operator key exists: PIER_OPERATOR_KEY when given (registered on first sight), else the one
 * in DATA_DIR/operator.key, minted there with mode 0600 on first start. Returns where it lives.
 */
export async function ensureOperatorKey(deps: Deps): Promise<{ source: 'env' | 'file'; file?: string }> {
  if (deps.config.operatorKey) {
    await register(deps, deps.config.operatorKey);
    return { source: 'env' };
  }
  const file = path.join(deps.config.dataDir, 'operator.key');
  if (fs.existsSync(file)) {
    const token = fs.readFileSync(file, 'utf8').trim();
    if (await deps.credentials.verify(token)) return { source: 'file', file };
    // The file outlived its database (a new DATABASE_URL): mint a fresh one.
  }
  const { token } = await deps.credentials.issue({ kind: 'op', label: 'operator (generated)' });
  fs.mkdirSync(deps.config.dataDir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  return { source: 'file', file };
}

async function register(deps: Deps, token: string): Promise<void> {
  const parsed = parseCredential(token);
  if (parsed?.kind !== 'op') throw new Error('PIER_OPERATOR_KEY is not an op.<keyId>.<secret> key.');
  const [row] = await deps.db.orm.select().from(credentials).where(eq(credentials.keyId, parsed.keyId));
  if (row) return;
  await deps.db.orm.insert(credentials).values({
    kind: 'op',
    keyId: parsed.keyId,
    secretHash: deps.keyring.hashSecret(parsed.secret),
    label: 'operator (PIER_OPERATOR_KEY)',
  });
}
