import { EventEmitter } from 'node:events';
import { Agent, errors, request, type Dispatcher } from 'undici';
import type { UpstreamRequest, UpstreamResponse, UpstreamTimeouts, UpstreamTransport } from './upstream-adapter.js';

/**
 * connect: refused, unresolvable or not connected in time; first-byte-timeout: no response head within the
 * first-byte timeout; idle-timeout: the body went silent longer than the idle timeout; reset: the connection
 * broke; aborted: the caller left.
 */
export type UpstreamFailureKind = 'connect' | 'first-byte-timeout' | 'idle-timeout' | 'reset' | 'aborted';

/** A transport-level failure; its message is generic because the underlying one may contain the upstream URL. */
export class UpstreamConnectionError extends Error {
  override name = 'UpstreamConnectionError';
  constructor(readonly kind: UpstreamFailureKind, options?: { cause?: unknown }) {
    super(`upstream ${kind} failure`, options);
  }
}

function classify(error: unknown, signal: AbortSignal): UpstreamFailureKind {
  if (signal.aborted) return 'aborted';
  if (error instanceof errors.HeadersTimeoutError) return 'first-byte-timeout';
  if (error instanceof errors.BodyTimeoutError) return 'idle-timeout';
  if (error instanceof errors.ConnectTimeoutError) return 'connect';
  const code = (error as { code?: unknown }).code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'connect';
  return 'reset';
}

/**
 * The first-byte and idle timers of one upstream exchange, on native timers: undici's own run on a coarse clock
 * (about a second of slack), too loose for sub-second settings and for telling the two apart. The idle timer runs
 * only while the relay waits for the upstream, so a slow caller (backpressure) never looks like a silent upstream.
 *
 * It is also the exchange's abort signal for undici, which takes an EventEmitter with `aborted`, `reason` and an
 * `abort` event as well as an AbortSignal: an AbortController costs a few microseconds to create, this next to nothing.
 */
class ExchangeTimers extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;
  expired: 'first-byte-timeout' | 'idle-timeout' | null = null;
  #waiting = false;
  #head: NodeJS.Timeout | null;
  #idle: NodeJS.Timeout | null = null;
  readonly #onCallerAbort = (): void => this.#abort(this.caller.reason);

  constructor(
    private readonly caller: AbortSignal,
    private readonly timeouts: UpstreamTimeouts,
  ) {
    super();
    caller.addEventListener('abort', this.#onCallerAbort, { once: true });
    this.#head = setTimeout(() => this.#expire('first-byte-timeout'), timeouts.firstByteMs);
    this.#head.unref();
  }

  headersArrived(): void {
    if (this.#head !== null) clearTimeout(this.#head);
    this.#head = null;
  }

  /** The relay asks for the next body chunk: the idle clock starts. */
  waiting(): void {
    this.#waiting = true;
    if (this.#idle === null) {
      this.#idle = setTimeout(() => {
        if (this.#waiting) this.#expire('idle-timeout');
      }, this.timeouts.idleMs);
      this.#idle.unref();
    } else {
      this.#idle.refresh();
    }
  }

  /** A chunk (or the end) arrived: the idle clock stops. */
  arrived(): void {
    this.#waiting = false;
  }

  done(): void {
    this.#waiting = false;
    if (this.#head !== null) clearTimeout(this.#head);
    if (this.#idle !== null) clearTimeout(this.#idle);
    this.#head = null;
    this.#idle = null;
    this.caller.removeEventListener('abort', this.#onCallerAbort);
  }

  /** Why the exchange failed: a timer of ours, the caller leaving, or what the connection said. */
  failure(error: unknown): UpstreamConnectionError {
    return new UpstreamConnectionError(this.expired ?? classify(error, this.caller), { cause: error });
  }

  #expire(kind: 'first-byte-timeout' | 'idle-timeout'): void {
    this.expired = kind;
    this.#abort(new UpstreamConnectionError(kind));
  }

  #abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
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
    if (options.signal.aborted) throw new UpstreamConnectionError('aborted');
    const timers = new ExchangeTimers(options.signal, options.timeouts);
    let response: Dispatcher.ResponseData;
    try {
      response = await request(upstream.url, {
        method: upstream.method,
        headers: upstream.headers,
        // A streamed body (an upload spooled to disk) is opened afresh for every attempt; undici writes an async
        // iterable chunk by chunk, waiting for the socket to drain (no Readable in between, nothing buffered). undici
        // accepts async iterables at run time ("a Readable stream, an iterable, or an async iterable"); its request
        // typings leave them out, hence the cast.
        body: upstream.streamedBody === undefined ? upstream.body : (upstream.streamedBody.open() as unknown as Dispatcher.RequestOptions['body']),
        signal: timers,
        dispatcher: this.#agent,
        // Ours (ExchangeTimers) are exact; undici's are off.
        headersTimeout: 0,
        bodyTimeout: 0,
      });
    } catch (error) {
      timers.done();
      throw timers.failure(error);
    }
    timers.headersArrived();
    const body = response.body;
    return {
      status: response.statusCode,
      headers: response.headers,
      body: wrapBody(body, timers),
      discard: () => {
        timers.done();
        body.destroy();
      },
    };
  }

  close(): Promise<void> {
    return this.#agent.close();
  }
}

/** How much of an unread response body is worth reading out to keep its connection in the pool. */
const DRAIN_LIMIT_BYTES = 256 * 1024;

/** Reads a body to its end; false when it failed, was aborted or held more than the limit. */
async function drain(source: AsyncIterator<Buffer>, signal: { readonly aborted: boolean }): Promise<boolean> {
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
 * The upstream body as the relay reads it: transport errors become UpstreamConnectionError (timeouts named by
 * ExchangeTimers), and a reader that stops early (a parser done at `message_stop`) does not destroy the
 * connection: the rest of the body, usually a few bytes, is read out so the keep-alive connection returns to the
 * pool. A caller abort, a timeout, or a large remainder still destroys it.
 */
function wrapBody(body: AsyncIterable<Buffer> & { destroy(): void }, timers: ExchangeTimers): AsyncIterable<Buffer> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<Buffer> {
      const source = body[Symbol.asyncIterator]();
      const timed: AsyncIterator<Buffer> = {
        async next(): Promise<IteratorResult<Buffer>> {
          timers.waiting();
          try {
            const result = await source.next();
            timers.arrived();
            if (result.done === true) timers.done();
            return result;
          } catch (error) {
            timers.done();
            throw timers.failure(error);
          }
        },
      };
      return {
        next: () => timed.next(),
        async return(): Promise<IteratorResult<Buffer>> {
          // In the background: the caller's stream must not wait for the upstream's last bytes.
          void drain(timed, timers).then((complete) => {
            timers.done();
            if (!complete) body.destroy();
          });
          return { done: true, value: undefined };
        },
      };
    },
  };
}
