import { describe, expect, it } from 'vitest';
import { pkceChallenge } from '../areas/identity/login-codes.ts';
import { PierApiError, PierClient } from '../sdk/client.ts';
import { browserLogin, pkcePair } from './browser-login.ts';
import { readCliEnv } from './env.ts';

// The browser flow's edges in-process: the "browser" is `true` (opens nothing), the server a fake fetch.

function setup(answer: (body: { code: string; codeVerifier?: string }) => Response, timeoutMs = 10_000) {
  let printed = '';
  const seen: { code: string; codeVerifier?: string }[] = [];
  const client = new PierClient({
    baseUrl: 'http://pier.test',
    fetch: (async (_url: string, init: RequestInit) => {
      const body = JSON.parse(String(init.body));
      seen.push(body);
      return answer(body);
    }) as unknown as typeof fetch,
  });
  const login = browserLogin({
    env: readCliEnv({ PIER_BROWSER: 'true' }, 'linux'),
    client,
    stderr: { write: (s: string) => (printed += s) },
    timeoutMs,
  });
  login.catch(() => {});
  const loginUrl = async () => {
    while (!printed.includes('/cli/login?')) await new Promise((r) => setTimeout(r, 5));
    return new URL(/(http:\/\/pier\.test\/cli\/login\?\S+)/.exec(printed)![1]!);
  };
  return { login, loginUrl, seen };
}

describe('pier login browser flow', () => {
  it('makes an S256 PKCE pair the server accepts', () => {
    const { verifier, challenge } = pkcePair();
    expect(verifier).toMatch(/^[A-Za-z0-9_-]{43,128}$/);
    expect(challenge).toBe(pkceChallenge(verifier));
    expect(challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('keeps waiting through stray requests and redeems the code with the verifier', async () => {
    const ok = { token: 'pk.a.b', label: 'cli host', user: { id: 'u', email: 'a@example.com' } };
    const { login, loginUrl, seen } = setup(() => Response.json(ok));
    const url = await loginUrl();
    const callback = url.searchParams.get('callback')!;
    const state = url.searchParams.get('state')!;
    expect(url.searchParams.get('challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(callback).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);

    expect((await fetch(callback.replace('/callback', '/other'))).status).toBe(404);
    expect((await fetch(`${callback}?code=BCDF-GHJK&state=wrong`)).status).toBe(400);
    expect((await fetch(`${callback}?state=${state}`)).status).toBe(400);
    expect(seen).toEqual([]);

    const done = await fetch(`${callback}?code=BCDF-GHJK&state=${state}`);
    expect(done.status).toBe(200);
    expect(await done.text()).toContain('You can close this tab');
    expect(await login).toEqual(ok);
    expect(seen).toHaveLength(1);
    expect(pkceChallenge(seen[0]!.codeVerifier!)).toBe(url.searchParams.get('challenge'));
  });

  it('shows the server error in the browser and fails with it', async () => {
    const { login, loginUrl } = setup(() =>
      Response.json(
        { error: { code: 'CODE_EXPIRED', message: 'That login code has expired.' } },
        { status: 400 },
      ),
    );
    const url = await loginUrl();
    const res = await fetch(
      `${url.searchParams.get('callback')}?code=BCDF-GHJK&state=${url.searchParams.get('state')}`,
    );
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('CODE_EXPIRED');
    await expect(login).rejects.toBeInstanceOf(PierApiError);
    await expect(login).rejects.toMatchObject({ code: 'CODE_EXPIRED' });
  });

  it('gives up with LOGIN_TIMEOUT when nobody approves', async () => {
    const { login } = setup(() => Response.json({}), 50);
    await expect(login).rejects.toMatchObject({ code: 'LOGIN_TIMEOUT' });
  });
});
