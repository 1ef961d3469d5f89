/**
 * Credentials for a request could not be had: `rejected` — the issuer refused the channel's credential (it is bad);
 * `unreachable` — the issuer could not be reached or failed (transient).
 */
export class UpstreamAuthorizationError extends Error {
  override name = 'UpstreamAuthorizationError';
  constructor(readonly kind: 'rejected' | 'unreachable', message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
