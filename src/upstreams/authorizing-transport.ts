import type { UpstreamRequest, UpstreamResponse, UpstreamTimeouts, UpstreamTransport } from './upstream-adapter.js';

/**
 * Sends through another transport after applying the request's `authorize` (a signature, an access token). An
 * upstream that answers 401 gets the request once more with fresh credentials: a cached token may have been
 * revoked or expired early.
 */
export class AuthorizingTransport implements UpstreamTransport {
  constructor(private readonly inner: UpstreamTransport) {}

  async send(request: UpstreamRequest, options: { signal: AbortSignal; timeouts: UpstreamTimeouts }): Promise<UpstreamResponse> {
    const authorize = request.authorize;
    if (authorize === undefined) return this.inner.send(request, options);
    const response = await this.inner.send(await authorize(request, { refresh: false }), options);
    if (response.status !== 401 || options.signal.aborted) return response;
    response.discard();
    return this.inner.send(await authorize(request, { refresh: true }), options);
  }
}
