import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { errors } from '../../core/errors.ts';
import type { WindowRule } from '../../core/rate-limit/limiter.ts';
import type { Deps } from '../../deps.ts';
import { users } from './account-tables.ts';
import {
  claimByProof,
  isVerified,
  markEmailVerified,
  sendClaimMail,
  sendVerificationMail,
} from './email-verification.ts';
import { identityErrors } from './errors.ts';
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
/** Verification and claim mails per address: enough to retry, too few to flood someone's inbox. */
const MAILS_PER_ADDRESS: WindowRule = { limit: 5, windowSec: 3600 };

const email = z.email().max(320);
const password = z.string().max(1000);
const credentialsBody = z.strictObject({ email, password });
const tokenBody = z.strictObject({ token: z.string().max(200) });

function assertPasswordStrength(pw: string): void {
  if (pw.length < PASSWORD_MIN || pw.length > PASSWORD_MAX) throw identityErrors.weakPassword();
}

export async function dashboardAuthRoutes(app: FastifyInstance, opts: { deps: Deps }): Promise<void> {
  const { deps } = opts;
  const meta = (req: FastifyRequest) => ({ ip: req.ip, userAgent: req.headers['user-agent'] });

  async function signIn(req: FastifyRequest, reply: FastifyReply, user: User) {
    const { secret, session } = await createSession(deps, user.id, meta(req));
    setSessionCookie(deps, reply, secret);
    reply.header('cache-control', 'no-store');
    return { user: userOut(user), csrfToken: csrfTokenFor(deps, session.id) };
  }

  const userOut = (user: User) => ({ id: user.id, email: user.email, emailVerified: isVerified(user) });

  /** The signed-in session (CSRF checked), or AUTH_REQUIRED. */
  async function sessionOf(req: FastifyRequest) {
    const secret = readCookie(req, SESSION_COOKIE);
    const session = secret ? await findSession(deps, secret) : null;
    const user = session ? await getUser(deps, session.userId) : null;
    if (!session || !user) throw errors.authRequired('Sign in first.');
    assertCsrf(deps, req, session.id);
    return { session, user };
  }

  /** False (and nothing sent) once an address had its share of mail this hour. */
  async function mayMail(user: User): Promise<boolean> {
    return (await deps.limiter.hit(`account-mail:${user.id}`, MAILS_PER_ADDRESS)) <= MAILS_PER_ADDRESS.limit;
  }

  app.get('/api/dashboard/session', async (req, reply) => {
    reply.header('cache-control', 'no-store');
    const secret = readCookie(req, SESSION_COOKIE);
    const session = secret ? await findSession(deps, secret) : null;
    const user = session ? await getUser(deps, session.userId) : null;
    return {
      user: user ? userOut(user) : null,
      csrfToken: session && user ? csrfTokenFor(deps, session.id) : null,
      signup: deps.config.signup,
      selfMail: deps.config.selfMail,
      ip: req.ip,
      appsDomain: deps.config.appsDomain,
      appsScheme: new URL(deps.config.publicUrl).protocol.replace(':', ''),
    };
  });

  app.post('/api/dashboard/sign-up', { schema: { body: credentialsBody } }, async (req, reply) => {
    assertSameOrigin(deps, req);
    if (!deps.config.signup) throw identityErrors.signUpDisabled();
    const body = req.body as z.infer<typeof credentialsBody>;
    assertPasswordStrength(body.password);
    const ipKey = `signup:${req.ip}`;
    await deps.limiter.assertUnder(ipKey, SIGNUPS_PER_IP);
    await deps.limiter.hit(ipKey, SIGNUPS_PER_IP);
    const passwordHash = await hashPassword(body.password);
    // An existing e-mail (even one without a password yet) is never claimed by sign-up itself: that would
    // hand an invited account to whoever typed the address first. An unproven one can be claimed through
    // the address, though: a set-password link goes to it (the real owner after a squatter, docs/decisions/033).
    const [user] = await deps.db.orm
      .insert(users)
      .values({ email: normalizeEmail(body.email), passwordHash, createdAt: deps.clock.now() })
      .onConflictDoNothing()
      .returning();
    if (!user) {
      const existing = await findUserByEmail(deps, body.email);
      if (!existing || isVerified(existing)) throw identityErrors.signUpFailed();
      if (await mayMail(existing)) await sendClaimMail(deps, existing);
      reply.code(202).header('cache-control', 'no-store');
      return { user: null, csrfToken: null, checkEmail: true };
    }
    if (await mayMail(user)) await sendVerificationMail(deps, user);
    return signIn(req, reply, user);
  });

  app.post('/api/dashboard/verify-email', { schema: { body: tokenBody } }, async (req) => {
    assertSameOrigin(deps, req);
    const { user } = await sessionOf(req);
    const link = await checkPasswordLink(deps, (req.body as z.infer<typeof tokenBody>).token, 'verify');
    // Only the account that asked for the link may use it: a squatter's link, mailed to the real owner,
    // must not verify the squatter's account when the owner clicks it.
    if (link.user.id !== user.id) throw identityErrors.verifyOtherAccount();
    await consumePasswordLink(deps, link.id);
    await markEmailVerified(deps, user.id);
    return { user: userOut((await getUser(deps, user.id))!) };
  });

  app.post('/api/dashboard/resend-verification', async (req) => {
    assertSameOrigin(deps, req);
    const { user } = await sessionOf(req);
    if (isVerified(user)) return { sent: false, emailVerified: true };
    const sent = await mayMail(user);
    if (sent) await sendVerificationMail(deps, user);
    return { sent, emailVerified: false };
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
      throw identityErrors.signInFailed();
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
    // The link was mailed to the address, so using it proves it (and claims an unproven account).
    await claimByProof(deps, link.user, passwordHash);
    await revokeUserSessions(deps, link.user.id);
    return signIn(req, reply, (await getUser(deps, link.user.id))!);
  });
}
