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

/** How much of an unread response body is worth reading out to keep its connection in the pool. */
const DRAIN_LIMIT_BYTES = 256 * 1024;

/** Reads a body to its end; false when it failed, was aborted or held more than the limit. */
async function drain(source: AsyncIterator<Buffer>, signal: AbortSignal): Promise<boolean> {
  let drained = 0;
  try {
    while (!signal.aborted && drained <= DRAIN_LIMIT_BYTES) {
      const result = await source.next();
      if (result.done === true) return true;
      drained += result.value.length;
    }
  } catch {
    // the connection failed while draining: nothing left to save
  }
  return false;
}

/**
 * The upstream body as the relay reads it: transport errors become UpstreamConnectionError, and a reader that
 * stops early (a parser done at `message_stop`) does not destroy the connection: the rest of the body, usually a
 * few bytes, is read out so the keep-alive connection returns to the pool. A caller abort, or a large remainder,
 * still destroys it.
 */
function wrapBody(body: AsyncIterable<Buffer> & { destroy(): void }, signal: AbortSignal): AsyncIterable<Buffer> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<Buffer> {
      const source = body[Symbol.asyncIterator]();
      return {
        async next(): Promise<IteratorResult<Buffer>> {
          try {
            return await source.next();
          } catch (error) {
            throw new UpstreamConnectionError(classify(error, signal), { cause: error });
          }
        },
        async return(): Promise<IteratorResult<Buffer>> {
          // In the background: the caller's stream must not wait for the upstream's last bytes.
          void drain(source, signal).then((complete) => {
            if (!complete) body.destroy();
          });
          return { done: true, value: undefined };
        },
      };
    },
  };
}
