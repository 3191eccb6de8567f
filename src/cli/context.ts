import fs from 'node:fs';
import path from 'node:path';
import { PierClient } from '../sdk/client.ts';
import { ConfigStore } from './config-store.ts';
import { type CliEnv, DEFAULT_URL } from './env.ts';
import { CliError } from './errors.ts';
import type { Input, Output } from './prompt.ts';

/** Where the credential of the last client came from, so a 401 can name it (explain.ts). */
export type CredentialSource = 'env-token' | 'config-token' | 'env-operator' | 'file-operator';

export type CliIo = { stdin: Input; stdout: Output; stderr: Output };

/** What every command gets: the parsed environment, the config store, I/O and ready-made clients. */
export type CliContext = {
  env: CliEnv;
  io: CliIo;
  store: ConfigStore;
  /** The server: PIER_URL, else the one saved by `pier login`, else http://127.0.0.1:8787. */
  url(): string;
  /** A client without a credential (login). */
  anonClient(url?: string): PierClient;
  /** A client with the personal token (PIER_TOKEN, else the saved one for this URL). */
  userClient(): PierClient;
  /** The personal token in use and where it came from, or null. */
  userToken(): { token: string; source: 'env' | 'config' } | null;
  /** A client with the operator key (PIER_OPERATOR_KEY, else $DATA_DIR/operator.key). */
  operatorClient(): PierClient;
  /**
   * The status the command ends with when it did not throw: a command whose request succeeded but whose
   * answer is a failure for scripts (a deployment that ended `failed`, a domain still pending) sets it.
   */
  exitCode: number;
  /** Where the credential of the last client built came from, so a 401 can name it (explain.ts). */
  credentialUsed: CredentialSource | null;
};

const USER_AGENT = 'pier-cli/0.1.0';

export function sameUrl(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}

export function createContext(env: CliEnv, io: CliIo): CliContext {
  const store = new ConfigStore(env.configDir);
  const url = () => (env.url ?? store.read().url ?? DEFAULT_URL).replace(/\/+$/, '');
  const client = (token?: string, base = url()) =>
    new PierClient({ baseUrl: base, token, userAgent: USER_AGENT });

  const userToken = (): { token: string; source: 'env' | 'config' } | null => {
    if (env.token) return { token: env.token, source: 'env' };
    const saved = store.read();
    // A saved token is only ever sent to the server it was issued by.
    if (saved.token && saved.url && sameUrl(saved.url, url()))
      return { token: saved.token, source: 'config' };
    return null;
  };

  const ctx: CliContext = {
    exitCode: 0,
    credentialUsed: null,
    env,
    io,
    store,
    url,
    anonClient: (base) => client(undefined, base),
    userToken,
    userClient: () => {
      const t = userToken();
      if (!t)
        throw new CliError('NOT_LOGGED_IN', `Not logged in to ${url()}; run 'pier login' or set PIER_TOKEN.`);
      ctx.credentialUsed = t.source === 'env' ? 'env-token' : 'config-token';
      return client(t.token);
    },
    operatorClient: () => {
      const key = operatorKey(env);
      ctx.credentialUsed = env.operatorKey ? 'env-operator' : 'file-operator';
      return client(key);
    },
  };
  return ctx;
}

function operatorKey(env: CliEnv): string {
  if (env.operatorKey) return env.operatorKey;
  const file = path.join(env.dataDir, 'operator.key');
  try {
    const key = fs.readFileSync(file, 'utf8').trim();
    if (key) return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new CliError('OPERATOR_KEY_MISSING', `Cannot read ${file}: ${(err as Error).message}`);
  }
  throw new CliError(
    'OPERATOR_KEY_MISSING',
    `No operator key: set PIER_OPERATOR_KEY, or DATA_DIR to the server's data folder (no ${file}).`,
  );
}
