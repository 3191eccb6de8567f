import {
  type Channel,
  type ConnectorCode,
  type Message,
  messageAt,
  type Page,
  type ProviderResponse,
  str,
  type WorkspaceUser,
} from './types.ts';

// Slack Web API (https://api.slack.com/web): methods under https://slack.com/api, answers
// `{ ok: true, … }` or `{ ok: false, error: 'channel_not_found' }` with HTTP 200; cursor pages through
// `response_metadata.next_cursor` (empty string at the end). OAuth v2 with a bot token; with token rotation
// on, the token answer carries refresh_token and expires_in.

type SlackPage = { response_metadata?: { next_cursor?: string } };
const next = (b: SlackPage) => b.response_metadata?.next_cursor || null;

const AUTH_ERRORS = new Set([
  'invalid_auth',
  'not_authed',
  'token_expired',
  'token_revoked',
  'account_inactive',
]);
const NOT_FOUND = new Set(['channel_not_found', 'user_not_found', 'message_not_found', 'unknown_method']);

function failure(res: ProviderResponse) {
  if (res.status !== 200) return null;
  let b: { ok?: boolean; error?: string };
  try {
    b = res.json();
  } catch {
    return null;
  }
  if (b.ok !== false) return null;
  const error = b.error ?? 'unknown_error';
  if (AUTH_ERRORS.has(error)) return { status: 401, message: error, authExpired: true };
  if (NOT_FOUND.has(error)) return { status: 404, message: error };
  if (error === 'ratelimited') return { status: 429, message: error };
  if (error === 'missing_scope' || error === 'not_in_channel' || error === 'restricted_action')
    return { status: 403, message: error };
  return { status: 400, message: error };
}

const channel = (c: Record<string, unknown>): Channel => ({
  id: String(c.id),
  name: String(c.name ?? ''),
  isPrivate: Boolean(c.is_private),
  memberCount: typeof c.num_members === 'number' ? c.num_members : null,
  rawData: c,
});

/** Slack's `ts` ("1712345678.000200", seconds) as an ISO time; null when it is not one a Date can hold. */
function isoFromSeconds(ts: unknown): string | null {
  const ms = Number(ts) * 1000;
  // Date holds ±8.64e15 ms; beyond that toISOString throws (a ts such as "1.5e300" must not be a 500).
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : null;
}

const message = (channelId: string, m: Record<string, unknown>): Message => ({
  id: String(m.ts),
  channelId,
  userId: str(m.user) ?? str(m.bot_id),
  content: String(m.text ?? ''),
  createdAt: isoFromSeconds(m.ts),
  rawData: m,
});

const user = (u: Record<string, unknown>): WorkspaceUser => {
  const profile = (u.profile ?? {}) as Record<string, unknown>;
  return {
    id: String(u.id),
    name: str(u.real_name) ?? str(profile.real_name) ?? str(u.name),
    email: str(profile.email),
    isBot: Boolean(u.is_bot),
    rawData: u,
  };
};

export const slack: ConnectorCode = {
  failure,
  errorMessage: (res) => messageAt(res, 'error'),
  async account(call, tokens) {
    const team = tokens.extra?.team as { id?: string; name?: string } | undefined;
    if (team?.id) return { id: team.id, name: team.name ?? null };
    const b = (await call({ method: 'POST', path: '/auth.test' })).json<{
      team_id?: string;
      team?: string;
    }>();
    return { id: b.team_id ?? '', name: b.team ?? null };
  },
  async revoke(call) {
    await call({ method: 'POST', path: '/auth.revoke' });
  },
  communication: {
    async listChannels(call, a): Promise<Page<Channel>> {
      const b = (
        await call({
          method: 'GET',
          path: '/conversations.list',
          query: {
            limit: a.limit,
            cursor: a.cursor,
            types: 'public_channel,private_channel',
            exclude_archived: true,
          },
        })
      ).json<{ channels: Record<string, unknown>[] } & SlackPage>();
      return { items: b.channels.map(channel), next: next(b) };
    },
    async listMessages(call, a) {
      const b = (
        await call({
          method: 'GET',
          path: '/conversations.history',
          query: { channel: a.channelId, limit: a.limit, cursor: a.cursor },
        })
      ).json<{ messages: Record<string, unknown>[]; has_more?: boolean } & SlackPage>();
      return {
        items: b.messages.map((m) => message(a.channelId, m)),
        next: b.has_more === false ? null : next(b),
      };
    },
    async postMessage(call, input) {
      const b = (
        await call({
          method: 'POST',
          path: '/chat.postMessage',
          json: { channel: input.channelId, text: input.content },
        })
      ).json<{ channel: string; ts: string; message?: Record<string, unknown> }>();
      return message(b.channel ?? input.channelId, { ts: b.ts, text: input.content, ...b.message });
    },
    async listUsers(call, a) {
      const b = (
        await call({ method: 'GET', path: '/users.list', query: { limit: a.limit, cursor: a.cursor } })
      ).json<{ members: Record<string, unknown>[] } & SlackPage>();
      return { items: b.members.map(user), next: next(b) };
    },
  },
};
