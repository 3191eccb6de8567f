import type { z } from 'zod';
// Type-only: the registry's zod schemas give the SDK its types, and nothing of the server loads at run time.
import type { Functions } from '../http/fn-registry.ts';

type Def = Functions[number];

/** Every function served at POST /api/fn/<name>. */
export type FnName = Def['name'];

type DefOf<N extends FnName> = Extract<Def, { name: N }>;

/** What a caller sends: the input schema before its defaults and transforms apply. */
export type FnInput<N extends FnName> = z.input<DefOf<N>['input']>;

/** What the server answers (the whole 200 body). */
export type FnOutput<N extends FnName> = z.output<DefOf<N>['output']>;

/** The arguments of `call`: the input may be left out when the function takes `{}`. */
export type CallArgs<N extends FnName> =
  Record<string, never> extends FnInput<N> ? [input?: FnInput<N>] : [input: FnInput<N>];
