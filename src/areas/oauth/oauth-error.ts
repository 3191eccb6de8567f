// Errors of the OAuth endpoints take RFC 6749's shape (`{ error, error_description }`), not Pier's
// envelope: OAuth clients (the MCP SDK among them) parse these. The consent functions, which the dashboard
// calls, use the catalogue in src/core/errors.ts as every other function does.

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'access_denied'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'too_many_requests';

export class OAuthError extends Error {
  readonly error: OAuthErrorCode;
  readonly status: number;
  readonly headers: Record<string, string>;
  constructor(
    error: OAuthErrorCode,
    description: string,
    status = 400,
    headers: Record<string, string> = {},
  ) {
    super(description);
    this.error = error;
    this.status = status;
    this.headers = headers;
  }

  body(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.error, error_description: this.message };
  }
}
