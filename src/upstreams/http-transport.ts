import { Agent, errors, request } from 'undici';
import type { UpstreamRequest, UpstreamResponse, UpstreamTimeouts, UpstreamTransport } from './upstream-adapter.js';

export type UpstreamFailureKind = 'connect' | 'timeout' | 'reset' | 'aborted';

/** A transport-level failure; its message is generic because the underlying one may contain the upstream URL. */
export class UpstreamConnectionError extends Error {
  override name = 'UpstreamConnectionError';
  constructor(readonly kind: UpstreamFailureKind, options?: { cause?: unknown }) {
    super(`upstream ${kind} failure`, options);
  }
}

function classify(error: unknown, signal: AbortSignal): UpstreamFailureKind {
  if (signal.aborted) return 'aborted';
  if (error instanceof errors.HeadersTimeoutError || error instanceof errors.BodyTimeoutError || error instanceof errors.ConnectTimeoutError) return 'timeout';
  const code = (error as { code?: unknown }).code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EHOSTUNREACH') return 'connect';
  return 'reset';
}

/** Upstream HTTP through one undici Agent: keep-alive pools per origin, no new connection per request. */
export class HttpTransport implements UpstreamTransport {
  readonly #agent: Agent;

  constructor(options: { connectionsPerOrigin?: number } = {}) {
    this.#agent = new Agent({
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
      connections: options.connectionsPerOrigin ?? 256,
      pipelining: 1,
      connect: { timeout: 10_000 },
    });
  }

  async send(upstream: UpstreamRequest, options: { signal: AbortSignal; timeouts: UpstreamTimeouts }): Promise<UpstreamResponse> {
    try {
      const response = await request(upstream.url, {
        method: upstream.method,
        headers: upstream.headers,
        body: upstream.body,
        signal: options.signal,
        dispatcher: this.#agent,
        headersTimeout: options.timeouts.firstByteMs,
        bodyTimeout: options.timeouts.idleMs,
      });
      const body = response.body;
      return {
        status: response.statusCode,
        headers: response.headers,
        body: wrapBody(body, options.signal),
        discard: () => {
          body.destroy();
        },
      };
    } catch (error) {
      throw new UpstreamConnectionError(classify(error, options.signal), { cause: error });
    }
  }

  close(): Promise<void> {
    return this.#agent.close();
  }
}

async function* wrapBody(body: AsyncIterable<Buffer>, signal: AbortSignal): AsyncIterable<Buffer> {
  try {
    for await (const chunk of body) yield chunk;
  } catch (error) {
    throw new UpstreamConnectionError(classify(error, signal), { cause: error });
  }
}
