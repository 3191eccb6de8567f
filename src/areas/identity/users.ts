import { eq } from 'drizzle-orm';
import type { Deps } from '../../deps.ts';
import { users } from './account-tables.ts';

export type User = typeof users.$inferSelect;

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export async function findUserByEmail(deps: Deps, email: string): Promise<User | null> {
  const [u] = await deps.db.orm
    .select()
    .from(users)
    .where(eq(users.email, normalizeEmail(email)));
  return u ?? null;
}

export async function getUser(deps: Deps, id: string): Promise<User | null> {
  const [u] = await deps.db.orm.select().from(users).where(eq(users.id, id));
  return u ?? null;
}

/** Returns the user with that e-mail, creating it (with no password yet) when new. */
export async function ensureUser(deps: Deps, email: string): Promise<{ user: User; created: boolean }> {
  const normalized = normalizeEmail(email);
  const [inserted] = await deps.db.orm
    .insert(users)
    .values({ email: normalized, createdAt: deps.clock.now() })
    .onConflictDoNothing()
    .returning();
  if (inserted) return { user: inserted, created: true };
  return { user: (await findUserByEmail(deps, normalized))!, created: false };
}
