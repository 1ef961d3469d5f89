import type { UpstreamRequest, UpstreamResponse, UpstreamTimeouts, UpstreamTransport } from './upstream-adapter.js';
import { UpstreamAuthorizationError } from './upstream-authorization-error.js';
import { UpstreamConnectionError } from './upstream-exchange.js';
import type { CallerSignal } from '../relay/caller-signal.js';

/** The answer standing for a credential the issuer refused: a 401, which the relay reads as a bad channel key. */
function refused(message: string): UpstreamResponse {
  const body = Buffer.from(JSON.stringify({ error: { message } }));
  return {
    status: 401,
    headers: { 'content-type': 'application/json' },
    body: { [Symbol.asyncIterator]: async function* () { yield body; } },
    discard: () => undefined,
  };
}

async function authorized(request: UpstreamRequest, refresh: boolean): Promise<UpstreamRequest | UpstreamResponse> {
  try {
    return await (request.authorize as NonNullable<UpstreamRequest['authorize']>)(request, { refresh });
  } catch (error) {
    if (error instanceof UpstreamAuthorizationError && error.kind === 'rejected') return refused(error.message);
    if (error instanceof UpstreamAuthorizationError || error instanceof UpstreamConnectionError) throw new UpstreamConnectionError('connect', { cause: error });
    throw error;
  }
}

function isResponse(value: UpstreamRequest | UpstreamResponse): value is UpstreamResponse {
  return 'status' in value;
}

/**
 * Sends through another transport after applying the request's `authorize` (a signature, an access token). An
 * upstream that answers 401 gets the request once more with fresh credentials: a cached token may have been
 * revoked or expired early. An issuer that refuses the credential answers as a 401 (the channel's key is bad); one
 * that cannot be reached fails like an unreachable upstream.
 */
export class AuthorizingTransport implements UpstreamTransport {
  constructor(private readonly inner: UpstreamTransport) {}

  async send(request: UpstreamRequest, options: { signal: CallerSignal; timeouts: UpstreamTimeouts }): Promise<UpstreamResponse> {
    if (request.authorize === undefined) return this.inner.send(request, options);
    const first = await authorized(request, false);
    if (isResponse(first)) return first;
    const response = await this.inner.send(first, options);
    if (response.status !== 401 || options.signal.aborted) return response;
    response.discard();
    const second = await authorized(request, true);
    return isResponse(second) ? second : this.inner.send(second, options);
  }
}
