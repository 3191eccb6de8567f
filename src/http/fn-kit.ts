import type { FastifyBaseLogger } from 'fastify';
import type { z } from 'zod';
import type { Caller, PlatformScope } from '../core/auth/caller.ts';
import type { ErrorCode } from '../core/errors.ts';
import type { Deps } from '../deps.ts';

export type FnAuth =
  | { kind: 'none' }
  | { kind: 'user' }
  | { kind: 'platform'; scope: PlatformScope }
  | { kind: 'operator' };

export type FnContext<C extends Caller | null = Caller> = {
  deps: Deps;
  caller: C;
  ip: string;
  log: FastifyBaseLogger;
};

type CallerFor<A extends FnAuth> = A extends { kind: 'user' }
  ? Extract<Caller, { kind: 'user' }>
  : A extends { kind: 'platform' }
    ? Extract<Caller, { kind: 'platform' }>
    : A extends { kind: 'operator' }
      ? Extract<Caller, { kind: 'operator' }>
      : null;

export type FnDef<
  I extends z.ZodType = z.ZodType,
  O extends z.ZodType = z.ZodType,
  A extends FnAuth = FnAuth,
  N extends string = string,
> = {
  /** Kept as a literal type so the SDK can type `call(name, input)` from the registry. */
  name: N;
  summary: string;
  auth: A;
  input: I;
  output: O;
  /**
   * The least role in the organization it acts on that the handler requires (it checks that itself):
   * 'manager' is owner or admin. Tells the MCP endpoint which tools to leave out for a plain member.
   */
  minRole?: 'manager' | 'owner';
  /** Catalogued error codes this function answers beyond the shared ones (for the OpenAPI document). */
  errors: readonly ErrorCode[];
  handler: (ctx: FnContext<CallerFor<A>>, input: z.infer<I>) => Promise<z.infer<O>>;
};

export function defineFn<I extends z.ZodType, O extends z.ZodType, A extends FnAuth, const N extends string>(
  def: FnDef<I, O, A, N>,
): FnDef<I, O, A, N> {
  return def;
}
