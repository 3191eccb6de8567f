// The dashboard's only way to the server: the function API (with the session cookie and its CSRF token)
// and the few dashboard endpoints. No second back end.
import type { FnOutput } from '../../src/sdk/types.ts';

export type User = { id: string; email: string; emailVerified: boolean };
export type SessionInfo = {
  user: User | null;
  csrfToken: string | null;
  signup: boolean;
  /** No SMTP_URL and the self mail view on: Pier's mail to the signed-in person is shown in the dashboard. */
  selfMail: boolean;
  ip: string;
  appsDomain: string;
  appsScheme: string;
};

export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  constructor(code: string, message: string, status: number) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

let csrfToken: string | null = null;
let onSignedOut: () => void = () => {};

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called when the server answers 401 to a signed-in page (session expired or revoked elsewhere). */
export function whenSignedOut(fn: () => void): void {
  onSignedOut = fn;
}

async function post<T>(url: string, body: unknown): Promise<T> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (csrfToken) headers['x-csrf-token'] = csrfToken;
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch {
    throw new ApiError('NETWORK', 'Pier could not be reached; check your connection.', 0);
  }
  const data = await res.json().catch(() => null);
  if (!res.ok) {
    const err = data?.error;
    if (res.status === 401 && url.startsWith('/api/fn/')) onSignedOut();
    throw new ApiError(
      err?.code ?? 'INTERNAL',
      err?.message ?? `Request failed (${res.status}).`,
      res.status,
    );
  }
  return data as T;
}

/** Calls a function of the function API as the signed-in user. */
export function fn<T>(name: string, body: Record<string, unknown> = {}): Promise<T> {
  return post<T>(`/api/fn/${name}`, body);
}

export function dashboardPost<T>(path: string, body: unknown): Promise<T> {
  return post<T>(`/api/dashboard/${path}`, body);
}

export async function loadSession(): Promise<SessionInfo> {
  const res = await fetch('/api/dashboard/session', { credentials: 'same-origin' });
  if (!res.ok) throw new ApiError('INTERNAL', 'The session could not be loaded.', res.status);
  const s = (await res.json()) as SessionInfo;
  setCsrfToken(s.csrfToken);
  return s;
}

export type Org = FnOutput<'listMyOrgsForCli'>[number];
export const isManager = (org: Org | undefined) => org?.role === 'owner' || org?.role === 'admin';
