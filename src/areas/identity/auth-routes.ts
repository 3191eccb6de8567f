import { eq } from 'drizzle-orm';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { errors } from '../../core/errors.ts';
import type { WindowRule } from '../../core/rate-limit/limiter.ts';
import type { Deps } from '../../deps.ts';
import { users } from './account-tables.ts';
import { checkPasswordLink, consumePasswordLink } from './password-links.ts';
import { dummyHash, hashPassword, PASSWORD_MAX, PASSWORD_MIN, verifyPassword } from './passwords.ts';
import {
  assertCsrf,
  assertSameOrigin,
  clearSessionCookie,
  createSession,
  csrfTokenFor,
  findSession,
  readCookie,
  revokeSession,
  revokeUserSessions,
  SESSION_COOKIE,
  setSessionCookie,
} from './sessions.ts';
import { findUserByEmail, getUser, normalizeEmail, type User } from './users.ts';

// The few dashboard-only endpoints: sign-up, sign-in, sign-out, the session probe and password links.
// Everything else the dashboard does goes through the function API with the session cookie.

const SIGNIN_FAILURES: WindowRule = { limit: 10, windowSec: 300 };
const SIGNUPS_PER_IP: WindowRule = { limit: 20, windowSec: 3600 };

const email = z.email().max(320);
const password = z.string().max(1000);
const credentialsBody = z.strictObject({ email, password });
const tokenBody = z.strictObject({ token: z.string().max(200) });

function assertPasswordStrength(pw: string): void {
  if (pw.length < PASSWORD_MIN || pw.length > PASSWORD_MAX) throw errors.weakPassword();
}

export async function dashboardAuthRoutes(app: FastifyInstance, opts: { deps: Deps }): Promise<void> {
  const { deps } = opts;
  const meta = (req: FastifyRequest) => ({ ip: req.ip, userAgent: req.headers['user-agent'] });

  async function signIn(req: FastifyRequest, reply: FastifyReply, user: User) {
    const { secret, session } = await createSession(deps, user.id, meta(req));
    setSessionCookie(deps, reply, secret);
    reply.header('cache-control', 'no-store');
    return {
      user: { id: user.id, email: user.email },
      csrfToken: csrfTokenFor(deps, session.id),
    };
  }

  app.get('/api/dashboard/session', async (req, reply) => {
    reply.header('cache-control', 'no-store');
    const secret = readCookie(req, SESSION_COOKIE);
    const session = secret ? await findSession(deps, secret) : null;
    const user = session ? await getUser(deps, session.userId) : null;
    return {
      user: user ? { id: user.id, email: user.email } : null,
      csrfToken: session && user ? csrfTokenFor(deps, session.id) : null,
      signup: deps.config.signup,
      ip: req.ip,
      appsDomain: deps.config.appsDomain,
      appsScheme: new URL(deps.config.publicUrl).protocol.replace(':', ''),
    };
  });

  app.post('/api/dashboard/sign-up', { schema: { body: credentialsBody } }, async (req, reply) => {
    assertSameOrigin(deps, req);
    if (!deps.config.signup) throw errors.signUpDisabled();
    const body = req.body as z.infer<typeof credentialsBody>;
    assertPasswordStrength(body.password);
    const ipKey = `signup:${req.ip}`;
    await deps.limiter.assertUnder(ipKey, SIGNUPS_PER_IP);
    await deps.limiter.hit(ipKey, SIGNUPS_PER_IP);
    const passwordHash = await hashPassword(body.password);
    // An existing e-mail (even one without a password yet) is never claimed by sign-up: that would hand an
    // invited account to whoever typed the address first. Invited users use their one-time link.
    const [user] = await deps.db.orm
      .insert(users)
      .values({ email: normalizeEmail(body.email), passwordHash, createdAt: deps.clock.now() })
      .onConflictDoNothing()
      .returning();
    if (!user) throw errors.signUpFailed();
    return signIn(req, reply, user);
  });

  app.post('/api/dashboard/sign-in', { schema: { body: credentialsBody } }, async (req, reply) => {
    assertSameOrigin(deps, req);
    const body = req.body as z.infer<typeof credentialsBody>;
    const keys = [`signin-fail:ip:${req.ip}`, `signin-fail:email:${normalizeEmail(body.email)}`];
    for (const k of keys) await deps.limiter.assertUnder(k, SIGNIN_FAILURES);
    const user = await findUserByEmail(deps, body.email);
    // Unknown e-mail, no password yet, or a wrong one: the same answer after the same amount of work.
    const ok = await verifyPassword(body.password, user?.passwordHash ?? (await dummyHash()));
    if (!user?.passwordHash || !ok) {
      for (const k of keys) await deps.limiter.hit(k, SIGNIN_FAILURES);
      throw errors.signInFailed();
    }
    return signIn(req, reply, user);
  });

  app.post('/api/dashboard/sign-out', async (req, reply) => {
    const secret = readCookie(req, SESSION_COOKIE);
    const session = secret ? await findSession(deps, secret) : null;
    if (session) {
      assertCsrf(deps, req, session.id);
      await revokeSession(deps, session.id);
    }
    clearSessionCookie(deps, reply);
    return { ok: true };
  });

  app.post('/api/dashboard/password-link', { schema: { body: tokenBody } }, async (req) => {
    const { user } = await checkPasswordLink(deps, (req.body as z.infer<typeof tokenBody>).token);
    return { email: user.email };
  });

  const setBody = tokenBody.extend({ password });
  app.post('/api/dashboard/set-password', { schema: { body: setBody } }, async (req, reply) => {
    assertSameOrigin(deps, req);
    const body = req.body as z.infer<typeof setBody>;
    assertPasswordStrength(body.password);
    const link = await checkPasswordLink(deps, body.token);
    const passwordHash = await hashPassword(body.password);
    await consumePasswordLink(deps, link.id);
    await deps.db.orm.update(users).set({ passwordHash }).where(eq(users.id, link.user.id));
    await revokeUserSessions(deps, link.user.id);
    return signIn(req, reply, link.user);
  });
}
