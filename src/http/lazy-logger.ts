import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger.js';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * A request's logger that makes its pino child (with the request id bound) only when something logs at an
 * enabled level. Most requests log nothing but the access line, which is written without a child
 * (access-log.ts), so making a child per request would be pure cost on the hot path.
 */
export class LazyLogger implements FastifyBaseLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #opts: ChildLoggerOptions;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, opts: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#opts = opts;
  }

  #real(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#opts);
    return this.#child;
  }

  #enabled(level: Level): boolean {
    if (this.#child || this.#opts.level) return true; // the child decides
    const p = this.#parent as FastifyBaseLogger & { isLevelEnabled?: (l: string) => boolean };
    return p.isLevelEnabled ? p.isLevelEnabled(level) : true;
  }

  get level(): string {
    return this.#child?.level ?? this.#opts.level ?? this.#parent.level;
  }

  set level(level: string) {
    this.#real().level = level;
  }

  isLevelEnabled(level: string): boolean {
    const l = this.#real() as FastifyBaseLogger & { isLevelEnabled?: (l: string) => boolean };
    return l.isLevelEnabled ? l.isLevelEnabled(level) : true;
  }

  bindings(): Bindings {
    return { ...(this.#parent as { bindings?: () => Bindings }).bindings?.(), ...this.#bindings };
  }

  child(bindings: Bindings, opts?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, opts);
  }

  // Prototype methods, not arrow-function fields: no closures allocated per request.
  fatal(...args: unknown[]): void {
    this.#log('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#log('error', args);
  }
  warn(...args: unknown[]): void {
    this.#log('warn', args);
  }
  info(...args: unknown[]): void {
    this.#log('info', args);
  }
  debug(...args: unknown[]): void {
    this.#log('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#log('trace', args);
  }
  silent(): void {}

  #log(level: Level, args: unknown[]): void {
    if (!this.#enabled(level)) return;
    (this.#real()[level] as (...a: unknown[]) => void)(...args);
  }
}

/** Fastify's childLoggerFactory: a LazyLogger per request instead of a pino child. */
export function lazyChildLoggerFactory(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  opts: ChildLoggerOptions,
): FastifyBaseLogger {
  return new LazyLogger(logger, bindings, opts);
}
