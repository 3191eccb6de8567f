import { z } from 'zod';
import { errors } from '../../core/errors.ts';
import { decodeCursor, encodeCursor } from '../../core/pagination.ts';
import { openSession } from './connection-sessions.ts';
import type { IntegrationDeps, Scope } from './connection-tokens.ts';
import { findConnection } from './connections.ts';
import { connectorBySlug } from './connectors/index.ts';
import type {
  Category,
  CommunicationOps,
  CrmOps,
  ListArgs,
  Page,
  ProductivityOps,
  ProviderCall,
  StorageOps,
} from './connectors/types.ts';
import { integrationsErrors } from './errors.ts';

// The unified operations: find the caller's connection (another tenant's is a 404), check its connector
// offers the category, open a session (refreshing a token about to expire) and run the connector's mapper.
// List cursors wrap the provider's own (cursor, page token, offset) in a signed Pier cursor bound to the
// connection and the list, so a cursor from another connection, list or tenant is refused.

export type Ops = {
  crm: CrmOps;
  storage: StorageOps;
  communication: CommunicationOps;
  productivity: ProductivityOps;
};

export async function withOps<C extends Category, T>(
  d: IntegrationDeps,
  s: Scope,
  connectionId: string,
  category: C,
  run: (ops: Ops[C], call: ProviderCall, connectionId: string) => Promise<T>,
): Promise<T> {
  const row = await findConnection(d, s, connectionId, { cached: true });
  const connector = connectorBySlug(row.connectorSlug);
  const ops = connector?.[category] as Ops[C] | undefined;
  if (!connector || !ops) throw integrationsErrors.operationNotSupported(row.connectorSlug, category);
  const { call } = await openSession(d, row);
  return run(ops, call, row.id);
}

const providerCursor = z.object({ p: z.string() });

export async function listVia<C extends Category, T, A extends object>(
  d: IntegrationDeps,
  s: Scope,
  q: { connectionId: string; cursor?: string; limit: number },
  category: C,
  list: { name: string; args?: A },
  run: (ops: Ops[C], call: ProviderCall, a: ListArgs & A) => Promise<Page<T>>,
): Promise<{ data: T[]; nextCursor: string | null }> {
  return withOps(d, s, q.connectionId, category, async (ops, call, id) => {
    // The list's own arguments (folder, channel, table) are part of the scope: a cursor of one folder is
    // not a cursor of another.
    const scope = `integrations:${id}:${list.name}:${JSON.stringify(list.args ?? {})}`;
    const cursor = q.cursor ? decodeCursor(d.keyring, scope, q.cursor, providerCursor).p : undefined;
    const page = await run(ops, call, { ...(list.args as A), cursor, limit: q.limit });
    return {
      data: page.items,
      nextCursor: page.next ? encodeCursor(d.keyring, scope, { p: page.next }) : null,
    };
  });
}

/** connectionId from the query string or the body; both given must agree. */
export function connectionIdOf(query: { connectionId?: string }, body?: { connectionId?: string }): string {
  const a = query.connectionId;
  const b = body?.connectionId;
  if (a && b && a !== b)
    throw errors.validation('connectionId differs between the query string and the body.');
  const id = a ?? b;
  if (!id) throw errors.validation('connectionId is required (in the query string or the body).');
  return id;
}
