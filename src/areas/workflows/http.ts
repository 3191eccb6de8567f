import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.ts';
import { workflowsErrors } from './errors.ts';
import { APPROVAL_PATH, HOOK_PATH, readApprovalToken, readHookToken } from './public-links.ts';
import { startFromWebhook } from './triggers/webhook.ts';
import { decide } from './waits/approvals.ts';

// The area's routes outside the v1 API, reached by signed URL with no API key (public-links.ts): a workflow's
// inbound webhook, and a waiting step's approval link. GET on an approval link only shows the question with
// two buttons, because mail clients and link scanners prefetch GETs; the POST decides, once.

type TokenReq = FastifyRequest<{ Params: { token: string } }>;

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

function html(reply: FastifyReply, status: number, title: string, body: string) {
  return reply
    .status(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")
    .send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${title}</title><style>body{font:16px system-ui,sans-serif;max-width:34rem;margin:4rem auto;padding:0 1rem}
button{font:inherit;padding:.5rem 1rem;margin-right:.5rem}textarea{width:100%;font:inherit}</style></head>
<body><h1>${title}</h1>${body}</body></html>`);
}

type ApprovalRow = {
  step_id: string;
  status: string;
  decided_at: Date | null;
  message: string | null;
  workflow_name: string | null;
};

async function approvalOf(deps: Deps, waitId: string): Promise<ApprovalRow | null> {
  const { rows } = await deps.db.query<ApprovalRow>(
    `select w.step_id, s.status, w.decided_at, wf.name as workflow_name,
            (select x->'wait'->'approval'->>'message' from jsonb_array_elements(r.steps) x
              where x->>'id' = w.step_id) as message
       from workflow_waits w
       join workflow_step_states s on s.run_id = w.run_id and s.step_id = w.step_id
       join workflow_runs r on r.id = w.run_id
       left join workflows wf on wf.id = r.workflow_id
      where w.id = $1 and w.kind = 'approval'`,
    [waitId],
  );
  return rows[0] ?? null;
}

export async function workflowsPublicRoutes(app: FastifyInstance, opts: { deps: Deps }): Promise<void> {
  const { deps } = opts;
  app.addContentTypeParser(
    ['application/x-www-form-urlencoded', 'text/plain'],
    { parseAs: 'string', bodyLimit: 1024 * 1024 },
    (req, body, done) =>
      done(
        null,
        String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')
          ? Object.fromEntries(new URLSearchParams(String(body)))
          : { body: String(body) },
      ),
  );

  app.post(`${HOOK_PATH}/:token`, async (req: TokenReq, reply) => {
    const id = await readHookToken(deps, req.params.token);
    if (!id) throw workflowsErrors.webhookNotFound();
    const f = await startFromWebhook(deps, id, req.body ?? {}, req.headers);
    if (f.outcome === 'rate_limited') throw workflowsErrors.workflowRateLimited(60);
    if (f.outcome === 'invalid') throw workflowsErrors.workflowVariablesInvalid([f.detail ?? '']);
    return reply.status(202).send({ runId: f.runId, status: f.outcome });
  });

  const waitOf = async (req: TokenReq) => {
    const waitId = readApprovalToken(deps, req.params.token);
    const row = waitId ? await approvalOf(deps, waitId) : null;
    return waitId && row ? { waitId, row } : null;
  };

  app.get(`${APPROVAL_PATH}/:token`, async (req: TokenReq, reply) => {
    const hit = await waitOf(req);
    if (!hit) return html(reply, 404, 'Approval not found', '<p>This approval link is not valid.</p>');
    const { row } = hit;
    const about = `<p>Workflow <strong>${escapeHtml(row.workflow_name ?? 'deleted workflow')}</strong>, step
<strong>${escapeHtml(row.step_id)}</strong>.</p>${row.message ? `<p>${escapeHtml(row.message)}</p>` : ''}`;
    if (row.decided_at)
      return html(
        reply,
        409,
        'Already decided',
        `${about}<p>This approval was already given or refused.</p>`,
      );
    if (row.status !== 'waiting')
      return html(reply, 409, 'No longer waiting', `${about}<p>The step is ${escapeHtml(row.status)}.</p>`);
    return html(
      reply,
      200,
      'Approval requested',
      `${about}<form method="post"><p><textarea name="comment" rows="3" placeholder="Comment (optional)"></textarea></p>
<button type="submit" name="decision" value="approve">Approve</button><button type="submit" name="decision" value="reject">Reject</button></form>`,
    );
  });

  app.post(`${APPROVAL_PATH}/:token`, async (req: TokenReq, reply) => {
    const hit = await waitOf(req);
    if (!hit) throw workflowsErrors.approvalNotFound();
    const b = (req.body ?? {}) as { decision?: string; approved?: boolean; comment?: string };
    const approved = b.approved ?? b.decision !== 'reject';
    const comment =
      typeof b.comment === 'string' && b.comment.trim() ? b.comment.trim().slice(0, 2000) : undefined;
    await decide(deps, hit.waitId, hit.row.step_id, { approved, by: 'link', comment });
    if (!String(req.headers.accept ?? '').includes('text/html'))
      return reply.header('cache-control', 'no-store').send({ approved });
    return html(reply, 200, approved ? 'Approved' : 'Rejected', '<p>Thank you; the workflow goes on.</p>');
  });
}
