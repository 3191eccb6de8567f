// drizzle wraps driver errors; the SQLSTATE sits on the error or its cause, on pg and PGlite alike.
function sqlState(err: unknown): string | undefined {
  let e: unknown = err;
  for (let i = 0; i < 3 && e; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

export function isUniqueViolation(err: unknown): boolean {
  return sqlState(err) === '23505';
}

/** Input the database cannot store as text (NUL bytes, bad encoding): the client's fault, not ours. */
export function isInvalidText(err: unknown): boolean {
  const s = sqlState(err);
  return s === '22021' || s === '22P05';
}
