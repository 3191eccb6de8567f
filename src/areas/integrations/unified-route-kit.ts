import { z } from 'zod';
import type { ErrorCode } from '../../core/errors.ts';
import { defineRoute, type Infer, type V1Context } from '../../http/v1-kit.ts';
import type { Category, ListArgs, Page, ProviderCall } from './connectors/types.ts';
import * as S from './schema.ts';
import { connectionIdOf, listVia, type Ops, withOps } from './unified.ts';

// The unified operations share one shape: the caller's connection of a category, then one connector call.
// These builders hold that shape so each operation in content-v1.ts is one declaration. The operationId is
// `integrations.<category>.<name>`; every operation answers the same provider and connection errors.

const ERR: readonly ErrorCode[] = [
  'CONNECTION_NOT_FOUND',
  'CONNECTION_NOT_CONNECTED',
  'OPERATION_NOT_SUPPORTED',
  'INVALID_CURSOR',
  'PROVIDER_RESOURCE_NOT_FOUND',
  'PROVIDER_REJECTED',
  'PROVIDER_FORBIDDEN',
  'PROVIDER_RATE_LIMITED',
  'PROVIDER_ERROR',
];

const scope = (c: V1Context) => ({ orgId: c.caller.orgId, environment: c.caller.environment });

/** The connection a validated body names: its schema's type is generic here, so it is read, not assumed. */
function bodyConnection(body: unknown): { connectionId?: string } {
  const id =
    typeof body === 'object' && body !== null && 'connectionId' in body ? body.connectionId : undefined;
  return { connectionId: typeof id === 'string' ? id : undefined };
}

/** What every list's query holds (S.listQuery), with any filters of its own. */
type ListQuery = { connectionId: string; cursor?: string; limit: number };

export function unifiedRoutes<C extends Category>(category: C) {
  return {
    /**
     * A GET list answering `{ data, nextCursor }`. `resource` names the list in its cursors (with the
     * list's own `args`), so a cursor of one list, folder or table is refused by another.
     */
    list<
      I extends z.ZodType,
      T extends ListQuery,
      P extends z.ZodType | undefined = undefined,
      A extends object = object,
    >(def: {
      url: string;
      resource: string;
      summary: string;
      /** S.listQuery, or an extension of it with the list's own filters. */
      query: z.ZodType<T>;
      params?: P;
      item: I;
      args?: (input: { query: T; params: Infer<P> }) => A;
      run: (ops: Ops[C], call: ProviderCall, a: ListArgs & A) => Promise<Page<z.infer<I>>>;
    }) {
      return defineRoute<undefined, z.ZodType<T>, P, ReturnType<typeof S.page<I>>>({
        method: 'GET',
        url: def.url,
        name: `integrations.${category}.${def.resource}.list`,
        summary: def.summary,
        query: def.query,
        params: def.params,
        response: S.page(def.item),
        errors: ERR,
        handler: async (c, { query, params }) => {
          const list = { name: def.resource, ...(def.args ? { args: def.args({ query, params }) } : {}) };
          return listVia(c.deps, scope(c), query, category, list, def.run);
        },
      });
    },

    /**
     * One call on one connection, named in the query string or (where the operation takes a body) in the
     * body. Without a `query`, the connection query.
     */
    call<
      O extends z.ZodType,
      B extends z.ZodType | undefined = undefined,
      P extends z.ZodType | undefined = undefined,
    >(def: {
      method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
      url: string;
      name: string;
      summary: string;
      params?: P;
      body?: B;
      response: O;
      status?: number;
      bodyLimit?: number;
      run: (
        ops: Ops[C],
        call: ProviderCall,
        input: { params: Infer<P>; body: Infer<B> },
      ) => Promise<z.infer<O>>;
    }) {
      return defineRoute<B, typeof S.connectionQuery, P, O>({
        method: def.method,
        url: def.url,
        name: `integrations.${category}.${def.name}`,
        summary: def.summary,
        query: S.connectionQuery,
        params: def.params,
        body: def.body,
        response: def.response,
        status: def.status,
        bodyLimit: def.bodyLimit,
        errors: ERR,
        handler: async (c, { query, params, body }) => {
          // A body sent to an operation that takes none (a DELETE) does not name the connection.
          const id = connectionIdOf(query, def.body ? bodyConnection(body) : undefined);
          return withOps(c.deps, scope(c), id, category, (ops, call) => def.run(ops, call, { params, body }));
        },
      });
    },
  };
}

/** What a delete answers once the provider has deleted. */
export const deleted = { success: true as const };

export const itemParams = z.object({ id: z.string().min(1).max(300) });
