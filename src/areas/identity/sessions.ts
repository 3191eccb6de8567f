import crypto from 'node:crypto';
import { parseCookie } from 'cookie';
import { and, eq, gt, isNull } from 'drizzle-orm';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Caller } from '../../core/auth/caller.ts';
import type { CallerResolver } from '../../core/auth/resolve.ts';
import { safeEqual } from '../../core/crypto.ts';
import type { Deps } from '../../deps.ts';
import { identityErrors } from './errors.ts';
import { sessions } from './tables.ts';

// Dashboard sessions: an httpOnly SameSite=Lax cookie holding a random secret. The cookie is a credential
// for the dashboard's own origin only: every state-changing request made with it must carry the session's
// CSRF token (synchronizer pattern: an HMAC of the session id, handed to the page by GET /api/dashboard/session)
// and, when the browser says where it comes from, come from Pier's own origin.

export const SESSION_COOKIE = 'pier_session';
export const SESSION_TTL_MS = 14 * 24 * 60 * 60 * 1000;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const TOUCH_EVERY_MS = 5 * 60 * 1000;

export type Session = typeof sessions.$inferSelect;

export async function createSession(
  deps: Deps,
  userId: string,
  meta: { ip?: string; userAgent?: string },
): Promise<{ secret: string; session: Session }> {
  const secret = crypto.randomBytes(32).toString('base64url');
  const now = deps.clock.now();
  const [session] = await deps.db.orm
    .insert(sessions)
    .values({
      secretHash: deps.keyring.hashSecret(secret),
      userId,
      ip: meta.ip?.slice(0, 64),
      userAgent: meta.userAgent?.slice(0, 300),
      createdAt: now,
      lastSeenAt: now,
      expiresAt: new Date(now.getTime() + SESSION_TTL_MS),
    })
    .returning();
  return { secret, session: session! };
}

export async function findSession(deps: Deps, secret: string): Promise<Session | null> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(secret)) return null;
  const now = deps.clock.now();
  const [s] = await deps.db.orm
    .select()
    .from(sessions)
    .where(
      and(
        eq(sessions.secretHash, deps.keyring.hashSecret(secret)),
        isNull(sessions.revokedAt),
        gt(sessions.expiresAt, now),
      ),
    );
  if (!s) return null;
  if (now.getTime() - s.lastSeenAt.getTime() > TOUCH_EVERY_MS) {
    await deps.db.orm.update(sessions).set({ lastSeenAt: now }).where(eq(sessions.id, s.id));
  }
  return s;
}

export async function revokeSession(deps: Deps, sessionId: string): Promise<void> {
  await deps.db.orm
    .update(sessions)
    .set({ revokedAt: deps.clock.now() })
    .where(and(eq(sessions.id, sessionId), isNull(sessions.revokedAt)));
}

/** Signs a user out everywhere (after a password change). */
export async function revokeUserSessions(deps: Deps, userId: string): Promise<void> {
  await deps.db.orm
    .update(sessions)
    .set({ revokedAt: deps.clock.now() })
    .where(and(eq(sessions.userId, userId), isNull(sessions.revokedAt)));
}

export function csrfTokenFor(deps: Deps, sessionId: string): string {
  return deps.keyring.sign(`csrf:${sessionId}`);
}

/**
 * One cookie of the request, parsed here with the `cookie` package only where a session is looked for, so
 * requests with a bearer header never pay for it (no plugin, no hook on every request). Malformed cookies
 * (bad percent-encoding, no `=`, odd quoting) never throw: a value that does not decode is returned as
 * sent, and simply matches no session.
 */
export function readCookie(req: FastifyRequest, name: string): string | null {
  const header = req.headers.cookie;
  if (!header) return null;
  return parseCookie(header)[name] ?? null;
}

export function setSessionCookie(deps: Deps, reply: FastifyReply, secret: string): void {
  const secure = deps.config.publicUrl.startsWith('https:') ? '; Secure' : '';
  reply.header(
    'set-cookie',
    `${SESSION_COOKIE}=${secret}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${SESSION_TTL_MS / 1000}${secure}`,
  );
}

export function clearSessionCookie(deps: Deps, reply: FastifyReply): void {
  const secure = deps.config.publicUrl.startsWith('https:') ? '; Secure' : '';
  reply.header('set-cookie', `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secure}`);
}

/** Refuses a request that the browser marks as coming from another site or origin. */
export function assertSameOrigin(deps: Deps, req: FastifyRequest): void {
  const origin = req.headers.origin;
  if (typeof origin === 'string' && origin !== 'null' && origin !== new URL(deps.config.publicUrl).origin)
    throw identityErrors.csrfInvalid();
  const site = req.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') throw identityErrors.csrfInvalid();
}

export function assertCsrf(deps: Deps, req: FastifyRequest, sessionId: string): void {
  assertSameOrigin(deps, req);
  const given = req.headers['x-csrf-token'];
  if (typeof given !== 'string' || !safeEqual(given, csrfTokenFor(deps, sessionId)))
    throw identityErrors.csrfInvalid();
}

export function sessionCaller(s: Session): Caller {
  return {
    kind: 'user',
    userId: s.userId,
    credentialId: s.id,
    sessionId: s.id,
    via: 'session',
    label: 'dashboard session',
    createdAt: s.createdAt,
  };
}

/** The session cookie as a caller of the function API; state-changing requests need the CSRF token. */
export function sessionResolver(deps: Deps): CallerResolver {
  return async (req) => {
    const secret = readCookie(req, SESSION_COOKIE);
    if (!secret) return null;
    const session = await findSession(deps, secret);
    if (!session) return null;
    if (!SAFE_METHODS.has(req.method)) assertCsrf(deps, req, session.id);
    return sessionCaller(session);
  };
}
