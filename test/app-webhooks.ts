import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { and, asc, eq } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { webhookDeliveries } from '../src/core/webhook-tables.ts';
import { attemptWebhook } from '../src/core/webhooks.ts';
import type { TestApp } from './harness.ts';

// The app's side of integrations webhooks in tests: a real HTTP receiver on 127.0.0.1 that keeps each
// request's raw body and headers, and a helper that delivers an organization's pending webhooks to it
// (what the webhooks.deliver job does) and verifies each with the `standardwebhooks` package.

export type AppEvent = { type: string; timestamp: string; data: Record<string, unknown> };

export async function startAppReceiver() {
  const got: { body: string; headers: Record<string, string> }[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    got.push({
      body: Buffer.concat(chunks).toString('utf8'),
      headers: req.headers as Record<string, string>,
    });
    res.writeHead(204).end();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return {
    url,
    got,
    /** Delivers the org's pending webhooks and answers the events received, each verified with `secret`. */
    async deliver(t: TestApp, orgId: string, secret: string): Promise<AppEvent[]> {
      const pending = await t.deps.db.orm
        .select({ id: webhookDeliveries.id })
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.orgId, orgId), eq(webhookDeliveries.status, 'pending')))
        .orderBy(asc(webhookDeliveries.createdAt));
      const from = got.length;
      for (const p of pending) await attemptWebhook(t.deps, p.id);
      const wh = new Webhook(secret);
      return got.slice(from).map((g) => wh.verify(g.body, g.headers) as AppEvent);
    },
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
