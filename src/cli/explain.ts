import path from 'node:path';
import { PierApiError } from '../sdk/client.ts';
import type { CliContext, CredentialSource } from './context.ts';
import { CliError } from './errors.ts';

// Failures reworded to name the real problem (issue 39): which credential the server refused, which URL did
// not answer. Only the failure path pays for this (one short probe when no token was found).

const PROBE_TIMEOUT_MS = 3000;

/** Where the URL in use came from, in the words the user set it with. */
function urlSource(ctx: CliContext): string {
  if (ctx.env.url) return 'PIER_URL';
  return ctx.store.read().url ? "the URL saved by 'pier login'" : 'the default URL; set PIER_URL';
}

function refusedCredential(ctx: CliContext, source: CredentialSource): string {
  const url = ctx.url();
  switch (source) {
    case 'env-token':
      return `${url} refused the token in PIER_TOKEN (revoked, expired, or not from this Pier): unset PIER_TOKEN to use your saved login, or set a valid personal token.`;
    case 'config-token':
      return `${url} refused the token 'pier login' saved in ${path.join(ctx.env.configDir, 'config.json')} (revoked or expired): run 'pier login' again.`;
    case 'env-operator':
      return `${url} refused the operator key in PIER_OPERATOR_KEY: set the key of this server (its DATA_DIR/operator.key).`;
    case 'file-operator':
      return `${url} refused the operator key in ${path.join(ctx.env.dataDir, 'operator.key')}: set DATA_DIR to this server's data folder, or PIER_OPERATOR_KEY.`;
  }
}

/** The same failure, or a clearer one. Never throws. */
export async function explainFailure(err: unknown, ctx: CliContext): Promise<unknown> {
  if (err instanceof PierApiError && err.status === 401 && ctx.credentialUsed)
    return new PierApiError(err.code, err.status, refusedCredential(ctx, ctx.credentialUsed), {
      requestId: err.requestId,
    });
  if (err instanceof CliError && err.code === 'NOT_LOGGED_IN') {
    // No token for this URL, but the likelier problem may be that nothing answers there.
    const url = ctx.url();
    try {
      await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    } catch (probe) {
      const e = probe as { name?: string; message?: string; cause?: { code?: string; message?: string } };
      const why =
        e.name === 'TimeoutError'
          ? `no answer in ${PROBE_TIMEOUT_MS} ms`
          : (e.cause?.code ?? e.cause?.message ?? e.message ?? 'failed');
      return new PierApiError(
        'NETWORK_ERROR',
        0,
        `Could not reach Pier at ${url} (${why}; ${urlSource(ctx)}). Is it running? You are not logged in there either: run 'pier login' once it answers.`,
      );
    }
  }
  return err;
}
