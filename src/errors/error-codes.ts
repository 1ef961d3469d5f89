/**
 * The error `type` of each status class. The specification's classes: 400 a malformed request, 401 no usable
 * credential, 402 the balance, 403 not permitted, 429 a limit or quota (`rate_limit_error`), 502 and 503 upstream
 * (`upstream_error`). HTTP's own refusals of a request (404, 405, 408, 409, 413, 421, 431) are the caller's fault like
 * a 400; 500 is the gateway's.
 */
const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'insufficient_balance',
  403: 'permission_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
  500: 'server_error',
  502: 'upstream_error',
  503: 'upstream_error',
};

/** The error type every answer with this status carries, whatever its code: one type per status class. */
export function errorTypeForStatus(status: number): string {
  return ERROR_TYPES[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
}

interface ErrorCodeDefinition {
  status: number;
  /** Whether the relay may try another channel after it. */
  retryable: boolean;
  /** What it means, for docs/errors.md (generated from here). */
  meaning: string;
}

/**
 * The one registry of error codes. Each code fixes its HTTP status at definition (its type follows from the status),
 * so a throw site names only the code and a message; docs/errors.md lists them all, generated from here.
 */
export const ERROR_CODES = {
  // 400: the caller's request is wrong
  bad_request: { status: 400, retryable: false, meaning: 'The request is malformed: a field is missing, of the wrong type or out of range (named in `param`).' },
  invalid_json: { status: 400, retryable: false, meaning: 'The body is empty, not JSON, not a JSON object, or nested deeper than 64 levels.' },
  model_not_found: { status: 400, retryable: false, meaning: 'No such model, or a model of another kind than the endpoint serves (a chat model on /v1/embeddings); GET /v1/models lists them with their kind.' },
  unsupported_parameter: { status: 400, retryable: false, meaning: "A valid parameter this model's channels cannot honour (e.g. Responses state on a bridged provider)." },
  model_capability_unsupported: { status: 400, retryable: false, meaning: "The request needs tools, images or a JSON schema, and no channel's model of this name offers it." },
  file_quota_exceeded: { status: 400, retryable: false, meaning: "The upload would take the account's live files past its storage quota (FILE_ACCOUNT_QUOTA_BYTES); delete files or wait for some to expire." },
  context_length_exceeded: { status: 400, retryable: false, meaning: "The prompt (and the output asked for) does not fit any channel's context window." },
  guardrail_blocked: { status: 400, retryable: false, meaning: "A guardrail policy refused the request, or stopped the answer (a stream ends with this error event); the message names the policy, never the text it found. `x-gateway-guardrails` says what each policy did." },
  // 401: no usable key
  missing_api_key: { status: 401, retryable: false, meaning: 'No API key was sent.' },
  invalid_api_key: { status: 401, retryable: false, meaning: 'The API key is malformed or unknown.' },
  revoked_api_key: { status: 401, retryable: false, meaning: 'The API key was revoked (or its account deleted).' },
  expired_api_key: { status: 401, retryable: false, meaning: 'The API key is past its expiry.' },
  invalid_admin_token: { status: 401, retryable: false, meaning: 'The admin API needs `Authorization: Bearer <ADMIN_TOKEN>`.' },
  // 402: money
  insufficient_balance: { status: 402, retryable: false, meaning: "The wallet cannot cover the request's upper bound (checked before any upstream call); top up and retry." },
  // 403: the key may not do this
  key_disabled: { status: 403, retryable: false, meaning: 'The API key is disabled.' },
  model_not_allowed: { status: 403, retryable: false, meaning: "The model is outside the key's allowlist." },
  ip_not_allowed: { status: 403, retryable: false, meaning: "The caller's IP address is outside the key's allowlist." },
  account_disabled: { status: 403, retryable: false, meaning: "The key's account is disabled." },
  browser_access_denied: { status: 403, retryable: false, meaning: 'A keyed request sent by a browser from an origin the key does not list: keys belong on a server.' },
  // HTTP's own refusals of a request
  not_found: { status: 404, retryable: false, meaning: 'No such route, or no such object (named in the message).' },
  method_not_allowed: { status: 405, retryable: false, meaning: 'The route exists but not with this method (`Allow` lists the methods).' },
  request_timeout: { status: 408, retryable: false, meaning: 'The request (headers, or headers and body) did not arrive within the deadlines; the connection is closed.' },
  conflict: { status: 409, retryable: false, meaning: 'The change conflicts with the current state (a name taken, a revoked key changed, …).' },
  misdirected_request: { status: 421, retryable: false, meaning: 'Console: asked for under a host name it does not serve (CONSOLE_URL unset and not a listened-on name; a DNS-rebinding page).' },
  payload_too_large: { status: 413, retryable: false, meaning: 'The body is over its limit (MAX_BODY_BYTES, 25 MB audio, 50 MB images).' },
  headers_too_large: { status: 431, retryable: false, meaning: 'The request line and headers are too large, or too many; the connection is closed.' },
  // 429: limits and quotas
  rate_limit_exceeded: { status: 429, retryable: false, meaning: 'A limit (RPM, TPM, concurrency of the key, account, plan or model; per-IP on public endpoints) is reached; `Retry-After` says how long to wait.' },
  too_many_failed_attempts: { status: 429, retryable: false, meaning: "Too many wrong API keys (or admin tokens) from the caller's IP address: unknown and malformed keys are refused until the window ends (`Retry-After`); good keys keep working." },
  quota_exhausted: { status: 429, retryable: false, meaning: "The key's quota cap or period budget, or a subscription's quota (policy `deny`, or its overage limit); `Retry-After` is the wait until it resets." },
  // redemption codes: malformed, unknown, already used, expired, disabled
  invalid_redemption_code: { status: 400, retryable: false, meaning: 'The redemption code is malformed.' },
  redemption_code_not_found: { status: 404, retryable: false, meaning: 'No such redemption code.' },
  redemption_code_redeemed: { status: 409, retryable: false, meaning: 'The redemption code was redeemed already.' },
  redemption_code_expired: { status: 409, retryable: false, meaning: 'The redemption code has expired.' },
  redemption_code_disabled: { status: 409, retryable: false, meaning: 'The redemption code was disabled by the operator.' },
  // web console: sessions, credentials and second factors
  unauthenticated: { status: 401, retryable: false, meaning: 'Console: no signed-in session.' },
  invalid_credentials: { status: 401, retryable: false, meaning: 'Console: the email, password or second factor is wrong.' },
  forbidden: { status: 403, retryable: false, meaning: "Console: the member's role may not do this (or sign-up is closed)." },
  csrf_failed: { status: 403, retryable: false, meaning: 'Console: the CSRF token or Origin of a change is missing or wrong; read GET /api/session and retry.' },
  email_unverified: { status: 403, retryable: false, meaning: 'Console: the email address must be verified first.' },
  weak_password: { status: 400, retryable: false, meaning: 'Console: the password is too short, too common or contains the email.' },
  invalid_code: { status: 400, retryable: false, meaning: 'Console: the two-factor or backup code is wrong or expired.' },
  invalid_token: { status: 400, retryable: false, meaning: 'Console: the mailed link is wrong, used or expired.' },
  email_taken: { status: 409, retryable: false, meaning: 'Console: an account with this email exists.' },
  // web console operators: a deployment-wide role, with a second factor required
  not_operator: { status: 403, retryable: false, meaning: 'Console: the user is not an operator of the gateway.' },
  two_factor_required: { status: 403, retryable: false, meaning: 'Console: operators must turn on two-factor sign-in first.' },
  operator_disabled: { status: 403, retryable: false, meaning: "Console: an owner disabled the operator's access." },
  operators_exist: { status: 409, retryable: false, meaning: 'Console: the gateway has operators already; the admin-token bootstrap works only once.' },
  account_locked: { status: 403, retryable: false, meaning: 'Console: an operator locked this user out.' },
  // web console single sign-on (OpenID Connect) and SCIM provisioning
  sso_required: { status: 403, retryable: false, meaning: "Console: this member's account requires single sign-on for their email domain; the password is refused." },
  sso_failed: { status: 401, retryable: false, meaning: "Console: a single sign-on was refused: its state, the provider's answer or the ID token failed a check, or the person may not join (the message says which)." },
  sso_unavailable: { status: 502, retryable: false, meaning: "Console: the identity provider could not be reached or answered something that is not OpenID Connect." },
  // 5xx: upstream and gateway faults
  upstream_error: { status: 502, retryable: true, meaning: 'Every channel tried failed (502; 503 with `Retry-After` when all were throttled); a stream that breaks after its first byte ends with an error event instead.' },
  upstream_unavailable: { status: 503, retryable: true, meaning: 'No channel serves the model right now (or exchange rates are not published yet).' },
  service_unavailable: { status: 503, retryable: false, meaning: "The gateway's own database or Redis is unreachable for a moment; nothing was charged; retry after `Retry-After`." },
  overloaded: { status: 503, retryable: false, meaning: 'This gateway process is at capacity and refused the request before reading it; nothing was charged; retry after `Retry-After` (1 s), ideally on another instance.' },
  internal_error: { status: 500, retryable: false, meaning: 'An unexpected fault in the gateway; the request id identifies it in the log.' },
} as const satisfies Record<string, ErrorCodeDefinition>;

export type ErrorCode = keyof typeof ERROR_CODES;
