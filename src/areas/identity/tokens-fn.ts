import { z } from 'zod';
import { errors } from '../../core/errors.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { userSchema } from './schema.ts';
import { revokeSession } from './sessions.ts';
import { getUser } from './users.ts';

export const whoamiForCli = defineFn({
  name: 'whoamiForCli',
  summary: 'The calling user and the token in use.',
  auth: { kind: 'user' },
  input: z.strictObject({}),
  output: z.object({
    user: userSchema,
    token: z.object({ label: z.string(), createdAt: z.string() }),
  }),
  errors: [],
  handler: async ({ deps, caller }) => {
    const user = await getUser(deps, caller.userId);
    if (!user) throw errors.authRequired();
    return {
      user: { id: user.id, email: user.email },
      token: { label: caller.label, createdAt: caller.createdAt.toISOString() },
    };
  },
});

export const revokeTokenForCli = defineFn({
  name: 'revokeTokenForCli',
  summary:
    'Revokes the calling token (log out); the user’s other tokens stay valid. Called with a dashboard session, signs that session out.',
  auth: { kind: 'user' },
  input: z.strictObject({}),
  output: z.object({ ok: z.literal(true) }),
  errors: [],
  handler: async ({ deps, caller }) => {
    if (caller.via === 'session') await revokeSession(deps, caller.sessionId ?? caller.credentialId);
    else await deps.credentials.revoke(caller.credentialId);
    return { ok: true as const };
  },
});
