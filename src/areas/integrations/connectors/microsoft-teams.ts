import { errors } from '../../../core/errors.ts';
import type { Channel, ConnectorCode, Message, Page, ProviderCall, WorkspaceUser } from './types.ts';
import { iso, messageAt, str } from './types.ts';

// Microsoft Teams through Graph v1.0 (https://learn.microsoft.com/en-us/graph/api/resources/teams-api-overview):
// the user's teams are GET /me/joinedTeams, a team's channels GET /teams/{team}/channels (both unpaged),
// a channel's messages GET /teams/{team}/channels/{channel}/messages with `$top` (at most 50) and
// `@odata.nextLink`, POST the same path `{ body: { content } }` to post; the directory's users GET /users
// with `$top` and `@odata.nextLink`. Channels live in teams: a unified channel id is `<teamId>|<channelId>`.
// Errors: `{ error: { code, message } }`.

type GChannel = { id: string; displayName: string; membershipType?: string; description?: string };
type GMessage = {
  id: string;
  from?: { user?: { id?: string; displayName?: string } | null } | null;
  body?: { contentType?: string; content?: string };
  createdDateTime?: string;
};
type GUser = { id: string; displayName?: string; mail?: string | null; userPrincipalName?: string };
type List<T> = { value: T[]; '@odata.nextLink'?: string };

const SEP = '|';
function splitChannel(id: string): { team: string; channel: string } {
  const i = id.indexOf(SEP);
  if (i <= 0)
    throw errors.validation(
      "Teams channel ids look like '<teamId>|<channelId>' (as listed by /communication/channels).",
    );
  return { team: id.slice(0, i), channel: id.slice(i + 1) };
}
const channelPath = (id: string) => {
  const { team, channel } = splitChannel(id);
  return `/teams/${encodeURIComponent(team)}/channels/${encodeURIComponent(channel)}/messages`;
};
const skipToken = (b: List<unknown>) =>
  b['@odata.nextLink'] ? new URL(b['@odata.nextLink']).searchParams.get('$skiptoken') : null;

const message = (channelId: string, m: GMessage): Message => ({
  id: m.id,
  channelId,
  userId: str(m.from?.user?.id),
  content: m.body?.content ?? '',
  createdAt: iso(m.createdDateTime),
  rawData: m as unknown as Record<string, unknown>,
});

async function listChannels(
  call: ProviderCall,
  a: { cursor?: string; limit: number },
): Promise<Page<Channel>> {
  // The cursor is `<team index>:<offset in that team's channels>`: teams and channels are not paged by Graph.
  const [ti, off] = (a.cursor ?? '0:0').split(':').map(Number) as [number, number];
  const teams = (await call({ method: 'GET', path: '/me/joinedTeams' })).json<List<{ id: string }>>().value;
  const team = teams[ti];
  if (!team) return { items: [], next: null };
  const channels = (
    await call({ method: 'GET', path: `/teams/${encodeURIComponent(team.id)}/channels` })
  ).json<List<GChannel>>().value;
  const items = channels.slice(off, off + a.limit).map(
    (c): Channel => ({
      id: `${team.id}${SEP}${c.id}`,
      name: c.displayName,
      isPrivate: c.membershipType === 'private',
      memberCount: null,
      rawData: { teamId: team.id, ...c },
    }),
  );
  const next =
    off + a.limit < channels.length ? `${ti}:${off + a.limit}` : ti + 1 < teams.length ? `${ti + 1}:0` : null;
  return { items, next };
}

export const microsoftTeams: ConnectorCode = {
  errorMessage: (res) => messageAt(res, 'error.message', 'error.code'),
  communication: {
    listChannels,
    async listMessages(call, a) {
      const b = (
        await call({
          method: 'GET',
          path: channelPath(a.channelId),
          query: { $top: Math.min(a.limit, 50), $skiptoken: a.cursor },
        })
      ).json<List<GMessage>>();
      return { items: b.value.map((m) => message(a.channelId, m)), next: skipToken(b) };
    },
    async postMessage(call, input) {
      const res = await call({
        method: 'POST',
        path: channelPath(input.channelId),
        json: { body: { contentType: 'text', content: input.content } },
      });
      return message(input.channelId, res.json<GMessage>());
    },
    async listUsers(call, a) {
      const b = (
        await call({
          method: 'GET',
          path: '/users',
          query: { $top: a.limit, $select: 'id,displayName,mail,userPrincipalName', $skiptoken: a.cursor },
        })
      ).json<List<GUser>>();
      return {
        items: b.value.map(
          (u): WorkspaceUser => ({
            id: u.id,
            name: str(u.displayName),
            email: str(u.mail) ?? str(u.userPrincipalName),
            isBot: false,
            rawData: u as unknown as Record<string, unknown>,
          }),
        ),
        next: skipToken(b),
      };
    },
  },
};
