/**
 * The one registry of error codes. Each code fixes its HTTP status and error type at definition, so a throw
 * site names only the code and a message. `retryable` says whether the relay may try another channel.
 */
export const ERROR_CODES = {
  // 400: the caller's request is wrong
  bad_request: { status: 400, type: 'invalid_request_error', retryable: false },
  invalid_json: { status: 400, type: 'invalid_request_error', retryable: false },
  model_not_found: { status: 400, type: 'invalid_request_error', retryable: false },
  /** A valid parameter this model's channels cannot honour (e.g. Responses state on a bridged provider). */
  unsupported_parameter: { status: 400, type: 'invalid_request_error', retryable: false },
  /** The request needs tools, images or a JSON schema, and no channel's model of this name offers it. */
  model_capability_unsupported: { status: 400, type: 'invalid_request_error', retryable: false },
  /** The prompt (and the output asked for) does not fit any channel's context window. */
  context_length_exceeded: { status: 400, type: 'invalid_request_error', retryable: false },
  // 401: no usable key
  missing_api_key: { status: 401, type: 'authentication_error', retryable: false },
  invalid_api_key: { status: 401, type: 'authentication_error', retryable: false },
  revoked_api_key: { status: 401, type: 'authentication_error', retryable: false },
  expired_api_key: { status: 401, type: 'authentication_error', retryable: false },
  invalid_admin_token: { status: 401, type: 'authentication_error', retryable: false },
  // 402: money
  insufficient_balance: { status: 402, type: 'insufficient_balance', retryable: false },
  // 403: the key may not do this
  key_disabled: { status: 403, type: 'permission_error', retryable: false },
  model_not_allowed: { status: 403, type: 'permission_error', retryable: false },
  ip_not_allowed: { status: 403, type: 'permission_error', retryable: false },
  account_disabled: { status: 403, type: 'permission_error', retryable: false },
  /** A keyed request sent by a browser from an origin the key does not list. */
  browser_access_denied: { status: 403, type: 'permission_error', retryable: false },
  // 404 / 405 / 408 / 409 / 413 / 415 / 421 / 431
  not_found: { status: 404, type: 'not_found_error', retryable: false },
  method_not_allowed: { status: 405, type: 'invalid_request_error', retryable: false },
  request_timeout: { status: 408, type: 'invalid_request_error', retryable: false },
  /** The console was asked for under a name it does not serve (no CONSOLE_URL; a DNS-rebinding page). */
  misdirected_request: { status: 421, type: 'invalid_request_error', retryable: false },
  conflict: { status: 409, type: 'invalid_request_error', retryable: false },
  payload_too_large: { status: 413, type: 'invalid_request_error', retryable: false },
  unsupported_media_type: { status: 415, type: 'invalid_request_error', retryable: false },
  headers_too_large: { status: 431, type: 'invalid_request_error', retryable: false },
  // 429: limits and quotas
  rate_limit_exceeded: { status: 429, type: 'rate_limit_error', retryable: false },
  /** Too many failed credentials (API keys or admin token) from one IP address. */
  too_many_failed_attempts: { status: 429, type: 'rate_limit_error', retryable: false },
  quota_exhausted: { status: 429, type: 'rate_limit_error', retryable: false },
  // redemption codes: malformed, unknown, already used, expired, disabled
  invalid_redemption_code: { status: 400, type: 'invalid_request_error', retryable: false },
  redemption_code_not_found: { status: 404, type: 'not_found_error', retryable: false },
  redemption_code_redeemed: { status: 409, type: 'invalid_request_error', retryable: false },
  redemption_code_expired: { status: 409, type: 'invalid_request_error', retryable: false },
  redemption_code_disabled: { status: 409, type: 'invalid_request_error', retryable: false },
  // web console: sessions, credentials and second factors
  unauthenticated: { status: 401, type: 'authentication_error', retryable: false },
  invalid_credentials: { status: 401, type: 'authentication_error', retryable: false },
  forbidden: { status: 403, type: 'permission_error', retryable: false },
  csrf_failed: { status: 403, type: 'permission_error', retryable: false },
  email_unverified: { status: 403, type: 'permission_error', retryable: false },
  weak_password: { status: 400, type: 'invalid_request_error', retryable: false },
  invalid_code: { status: 400, type: 'invalid_request_error', retryable: false },
  invalid_token: { status: 400, type: 'invalid_request_error', retryable: false },
  email_taken: { status: 409, type: 'invalid_request_error', retryable: false },
  // web console operators: a deployment-wide role, with a second factor required
  not_operator: { status: 403, type: 'permission_error', retryable: false },
  two_factor_required: { status: 403, type: 'permission_error', retryable: false },
  operator_disabled: { status: 403, type: 'permission_error', retryable: false },
  operators_exist: { status: 409, type: 'invalid_request_error', retryable: false },
  account_locked: { status: 403, type: 'permission_error', retryable: false },
  // 5xx: upstream and gateway faults
  upstream_error: { status: 502, type: 'upstream_error', retryable: true },
  upstream_unavailable: { status: 503, type: 'upstream_error', retryable: true },
  upstream_timeout: { status: 504, type: 'upstream_error', retryable: true },
  /** The gateway's own database or Redis is unreachable: nothing was billed; retry after Retry-After. */
  service_unavailable: { status: 503, type: 'server_error', retryable: false },
  /** This gateway process is at capacity and refused the request before any work: nothing was billed; retry after Retry-After. */
  overloaded: { status: 503, type: 'server_error', retryable: false },
  internal_error: { status: 500, type: 'server_error', retryable: false },
} as const satisfies Record<string, { status: number; type: string; retryable: boolean }>;

export type ErrorCode = keyof typeof ERROR_CODES;
