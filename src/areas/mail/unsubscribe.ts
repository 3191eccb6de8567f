import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { safeEqual } from '../../core/crypto.ts';

import { isUuid } from '../../core/ids.ts';
import type { Deps } from '../../deps.ts';
import { mailErrors } from './errors.ts';

// One-click unsubscribe (RFC 8058) for broadcast mail: each broadcast message names its one recipient's
// own URL in List-Unsubscribe, with List-Unsubscribe-Post. The URL is the e-mail's id and a keyring
// signature over that id and its recipient's address; the e-mail row says the organization and the
// environment. So it cannot be guessed or forged, needs no API key, and stays under Fastify's 100-character
// path-parameter limit. POST adds the address to the organization's suppression list; GET only shows a page
// with a button, because link scanners and mail clients prefetch GETs (docs/decisions/046).

const PATH = '/mail/unsubscribe';
/** Domain separation: the keyring's URL key also signs CDN URLs and cursors. */
const PURPOSE = 'mail-unsubscribe';

export type UnsubscribeClaim = { orgId: string; environment: string; address: string; emailId: string };

// 128 bits of HMAC-SHA-256 are plenty against forgery and keep the URL short.
const sign = (deps: Deps, emailId: string, address: string) =>
  deps.keyring.sign(`${PURPOSE}.${emailId}.${address}`).slice(0, 22);

/** The public URL of an address's one-click unsubscribe. */
export function unsubscribeUrl(deps: Deps, c: UnsubscribeClaim): string {
  const base = deps.config.publicUrl.replace(/\/+$/, '');
  return `${base}${PATH}/${c.emailId}.${sign(deps, c.emailId, c.address)}`;
}

/** What a token stands for, or null when this installation did not make it (tampered, truncated, foreign). */
export async function readUnsubscribeToken(deps: Deps, token: string): Promise<UnsubscribeClaim | null> {
  const [emailId, signature, extra] = token.split('.');
  // An upper-case id passes isUuid and finds the row, but the signature is over the id as issued (lower
  // case), so such a token is refused all the same.
  if (!emailId || !signature || extra !== undefined || !isUuid(emailId)) return null;
  const { rows } = await deps.db.query<{ org_id: string; environment: string; to_addresses: string[] }>(
    'SELECT org_id, environment, to_addresses FROM mail_emails WHERE id = $1 AND broadcast_id IS NOT NULL',
    [emailId],
  );
  const row = rows[0];
  const address = row?.to_addresses.length === 1 ? row.to_addresses[0]! : null;
  if (!row || !address || !safeEqual(sign(deps, emailId, address), signature)) return null;
  return { orgId: row.org_id, environment: row.environment, address, emailId };
}

/** Adds the address to the organization's suppression list (idempotent: a second click changes nothing). */
async function suppress(deps: Deps, c: UnsubscribeClaim): Promise<void> {
  await deps.db.query(
    `INSERT INTO mail_suppressions (org_id, environment, address, reason, email_id, created_at)
     VALUES ($1, $2, $3, 'unsubscribed', $4, $5) ON CONFLICT DO NOTHING`,
    [c.orgId, c.environment, c.address, c.emailId, deps.clock.now().toISOString()],
  );
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${title}</title><style>body{font:16px system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem}
button{font:inherit;padding:.5rem 1rem}</style></head><body><h1>${title}</h1>${body}</body></html>`;
}

type TokenReq = FastifyRequest<{ Params: { token: string } }>;

function html(reply: FastifyReply, status: number, text: string) {
  return reply
    .status(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")
    .send(text);
}

export async function unsubscribeRoutes(app: FastifyInstance, opts: { deps: Deps }): Promise<void> {
  const { deps } = opts;
  // RFC 8058: the mail client POSTs `List-Unsubscribe=One-Click` as a form (urlencoded or multipart). The
  // body says nothing the token does not, so it is read as text and not interpreted.
  for (const type of ['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'])
    app.addContentTypeParser(type, { parseAs: 'string', bodyLimit: 4096 }, (_req, _body, done) =>
      done(null, {}),
    );

  const claimOf = async (req: TokenReq) => {
    const c = await readUnsubscribeToken(deps, req.params.token);
    if (!c) throw mailErrors.unsubscribeTokenInvalid();
    return c;
  };

  app.get(`${PATH}/:token`, async (req: TokenReq, reply) => {
    const c = await claimOf(req);
    return html(
      reply,
      200,
      page(
        'Unsubscribe',
        `<p>Stop this sender's mailings to <strong>${escapeHtml(c.address)}</strong>?</p>
<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`,
      ),
    );
  });

  app.post(`${PATH}/:token`, async (req: TokenReq, reply) => {
    const c = await claimOf(req);
    await suppress(deps, c);
    if (!String(req.headers.accept ?? '').includes('text/html'))
      return reply.header('cache-control', 'no-store').send({ success: true });
    return html(
      reply,
      200,
      page(
        'Unsubscribed',
        `<p><strong>${escapeHtml(c.address)}</strong> will get no more of these mailings.</p>`,
      ),
    );
  });
}
