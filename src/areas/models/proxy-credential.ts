import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { ResolvedModel } from '../../core/ai/providers.ts';
import { ApiError, type ErrorBody } from '../../core/errors.ts';
import type { Deps } from '../../deps.ts';

// The proxy's own platform credential with the single scope `model.resolve`. It is issued on first use
// like any credential (only its HMAC in the database); the token itself stays in memory and, encrypted
// with the keyring, in DATA_DIR/model-proxy.credential so a restart reuses it instead of minting another.
// Resolution goes through POST /api/fn/resolveModel in-process, so the scope check and the audit log apply
// to the proxy exactly as to any other holder of the scope.

const FILE = 'model-proxy.credential';

export class ProxyCredential {
  readonly #deps: Deps;
  #token: Promise<string> | null = null;

  constructor(deps: Deps) {
    this.#deps = deps;
  }

  token(): Promise<string> {
    this.#token ??= this.#load().catch((err) => {
      this.#token = null;
      throw err;
    });
    return this.#token;
  }

  /** Forgets the token (it was revoked); the next call issues a new one. */
  reset(): void {
    this.#token = null;
  }

  async #load(): Promise<string> {
    const { deps } = { deps: this.#deps };
    const file = path.join(deps.config.dataDir, FILE);
    try {
      const token = deps.keyring.decrypt(fs.readFileSync(file, 'utf8').trim());
      const row = await deps.credentials.verify(token);
      if (row?.scopes.includes('model.resolve')) return token;
    } catch {}
    const { token } = await deps.credentials.issue({
      kind: 'plat',
      scopes: ['model.resolve'],
      label: 'model proxy',
      meta: { issuedBy: 'proxy role' },
    });
    fs.mkdirSync(deps.config.dataDir, { recursive: true, mode: 0o700 });
    fs.writeFileSync(file, deps.keyring.encrypt(token), { mode: 0o600 });
    return token;
  }
}

/** Resolves (org, model) through the function API with the proxy's credential. */
export async function resolveThroughApi(
  app: FastifyInstance,
  cred: ProxyCredential,
  orgId: string,
  model: string,
): Promise<ResolvedModel> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const res = await app.inject({
      method: 'POST',
      url: '/api/fn/resolveModel',
      headers: { authorization: `Bearer ${await cred.token()}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ orgId, model }),
    });
    if (res.statusCode === 200) return res.json() as ResolvedModel;
    if (res.statusCode === 401 && attempt === 0) {
      cred.reset(); // revoked by an operator: mint a fresh one once
      continue;
    }
    const body = res.json() as ErrorBody;
    throw new ApiError(body.error.code, res.statusCode, body.error.message);
  }
  throw new ApiError('INTERNAL', 500, 'The model proxy could not authenticate.');
}
