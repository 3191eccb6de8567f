import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { isInvalidText } from '../core/db/pg-errors.ts';
import { ApiError, errorBody, errors } from '../core/errors.ts';
import { drainBody } from './framework-errors.ts';

type Issue = {
  instancePath?: string;
  message?: string;
  params?: { issue?: { path?: unknown[]; message?: string } };
};

function describeValidation(issues: Issue[], context: string): string {
  const first = issues[0];
  const path =
    first?.params?.issue?.path?.join('.') ?? first?.instancePath?.replace(/^\//, '').replace(/\//g, '.');
  const msg = first?.params?.issue?.message ?? first?.message ?? 'is invalid';
  const where = path ? `${context}.${path}` : context;
  const more =
    issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  return `${where}: ${msg}${more}.`.replace(/\.\.$/, '.');
}

/** Maps every failure to the `{ error: { code, message } }` envelope; bad input never becomes a 500. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as FastifyError & { validationContext?: string };
  if (hasZodFastifySchemaValidationErrors(e)) {
    return errors.validation(describeValidation(e.validation as Issue[], e.validationContext ?? 'body'));
  }
  if (isResponseSerializationError(e)) return errors.internal();
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.validation('The body is not valid JSON.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.tooLarge();
    case 'FST_ERR_BAD_URL':
      return errors.badUrl();
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return errors.uriTooLong();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return errors.unsupportedMediaType();
  }
  if (e instanceof SyntaxError) return errors.validation('The body is not valid JSON.');
  // A backstop for every route: text the database refuses is bad input (400), not a crash (500).
  if (isInvalidText(err)) return errors.validation('The input holds characters that cannot be stored.');
  const status = typeof e.statusCode === 'number' ? e.statusCode : 500;
  if (status >= 400 && status < 500) return new ApiError('BAD_REQUEST', status, e.message || 'Bad request.');
  return errors.internal();
}

export function installErrorHandler(app: FastifyInstance, publicUrl: string): void {
  app.setErrorHandler((err, req, reply) => {
    const apiErr = toApiError(err);
    if (apiErr.status >= 500) req.log.error({ err }, 'request failed');
    if (apiErr.code === 'AUTH_REQUIRED') {
      reply.header(
        'www-authenticate',
        `Bearer resource_metadata="${publicUrl}/.well-known/oauth-protected-resource"`,
      );
    }
    for (const [k, v] of Object.entries(apiErr.headers)) reply.header(k, v);
    reply.status(apiErr.status);
    // The rest of a refused body is read first, so the client sees the 413 rather than a broken pipe.
    if (apiErr.status === 413 && !req.raw.complete)
      return drainBody(req.raw).then(() => {
        reply.send(errorBody(apiErr));
      });
    return reply.send(errorBody(apiErr));
  });
}
