import type { Dispatcher } from 'undici';
import { errors } from './undici-dispatch.js';
import type { UpstreamBody, UpstreamResponse, UpstreamTimeouts } from './upstream-adapter.js';
import type { CallerSignal } from '../relay/caller-signal.js';

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

function classify(error: unknown, signal: CallerSignal): UpstreamFailureKind {
  if (signal.aborted) return 'aborted';
  if (error instanceof errors.HeadersTimeoutError) return 'first-byte-timeout';
  if (error instanceof errors.BodyTimeoutError) return 'idle-timeout';
  if (error instanceof errors.ConnectTimeoutError) return 'connect';
  const code = (error as { code?: unknown }).code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'connect';
  return 'reset';
}

type ExchangeTimeout = 'first-byte-timeout' | 'idle-timeout';

/** A promise's settling functions, kept while the relay waits. */
interface Waiter<T> {
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

/** Unread body bytes held before undici is asked to stop reading the socket. */
const HIGH_WATER_BYTES = 64 * 1024;
/** How much of an unread response body is worth reading out to keep its connection in the pool. */
const DRAIN_LIMIT_BYTES = 256 * 1024;
const DONE: IteratorResult<Buffer> = { done: true, value: undefined };
const EMPTY = Buffer.alloc(0);

/**
 * One upstream HTTP exchange, as undici's dispatch handler, and the response it gives: `response` settles when the
 * head arrives (with the exchange itself, its status and headers set) or the exchange fails before it (with the
 * classified failure, timers stopped). The body is either an async iterator over the chunks received or, for a relay
 * that needs the whole answer before anything else, one promise of all of it (`whole`). undici's request API wraps the chunks in a stream and that stream's async iterator,
 * which cost more than the relay's own work on a small answer.
 *
 * It keeps the first-byte and idle timers on native timers: undici's own run on a coarse clock (about a second of
 * slack), too loose for sub-second settings and for telling the two apart. The idle timer runs only while the relay
 * waits for the upstream, so a slow caller (backpressure) never looks like a silent upstream.
 *
 * A reader that stops early (a parser done at `message_stop`) does not destroy the connection: the rest of the
 * body, usually a few bytes, is read out so the keep-alive connection returns to the pool. A caller abort, a
 * timeout, or a large remainder still destroys it.
 */
export class UpstreamExchange implements Dispatcher.DispatchHandler, AsyncIterable<Buffer>, UpstreamResponse {
  readonly response: Promise<UpstreamResponse>;
  /** The head's, set before `response` settles. */
  status = 0;
  headers!: Record<string, string | string[] | undefined>;
  readonly body: UpstreamBody = this;
  expired: ExchangeTimeout | null = null;
  #resolveHead!: (response: UpstreamResponse) => void;
  #rejectHead!: (error: unknown) => void;
  #headSettled = false;
  #controller: Dispatcher.DispatchController | null = null;
  /** Why the exchange was stopped before undici had started it (undici learns it when it starts). */
  #stopReason: Error | null = null;
  #chunks: Buffer[] = [];
  #queued = 0;
  #ended = false;
  #error: { cause: unknown } | null = null;
  #reader: Waiter<IteratorResult<Buffer>> | null = null;
  /** The relay waits for the whole body: every chunk is kept (no pausing) until the end or a failure settles it. */
  #whole: Waiter<Buffer> | null = null;
  #draining = 0;
  #discarding = false;
  #headTimer: NodeJS.Timeout | null;
  #idle: NodeJS.Timeout | null = null;
  /** The relay waits for body bytes (or the rest is being read out): the idle clock runs. */
  #waiting = false;
  #timersDone = false;
  readonly #onCallerAbort = (): void => this.#stop(asError(this.caller.reason));

  constructor(
    private readonly caller: CallerSignal,
    private readonly timeouts: UpstreamTimeouts,
  ) {
    this.response = new Promise<UpstreamResponse>((resolve, reject) => {
      this.#resolveHead = resolve;
      this.#rejectHead = reject;
    });
    caller.addEventListener('abort', this.#onCallerAbort, { once: true });
    this.#headTimer = setTimeout(() => this.#expire('first-byte-timeout'), timeouts.firstByteMs);
    this.#headTimer.unref();
  }

  // ------------------------------------------------------------------ undici's side

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#stopReason !== null) controller.abort(this.#stopReason);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    if (statusCode < 200 || this.#headSettled) return;
    this.#headSettled = true;
    if (this.#headTimer !== null) clearTimeout(this.#headTimer);
    this.#headTimer = null;
    this.status = statusCode;
    this.headers = headers;
    this.#resolveHead(this);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#discarding) {
      this.#draining += chunk.length;
      if (this.#draining > DRAIN_LIMIT_BYTES) this.destroy();
      else this.#startIdle();
      return;
    }
    this.#chunks.push(chunk);
    this.#queued += chunk.length;
    if (this.#whole !== null) {
      // The silence the idle timeout bounds starts again with every chunk.
      this.#startIdle();
      return;
    }
    if (this.#queued >= HIGH_WATER_BYTES) controller.pause();
    if (this.#reader !== null) this.#wakeReader();
  }

  onResponseEnd(): void {
    this.#ended = true;
    if (this.#discarding) this.done();
    else if (this.#whole !== null) this.#settleWhole();
    else if (this.#reader !== null) this.#wakeReader();
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    if (!this.#headSettled) {
      this.#headSettled = true;
      this.done();
      this.#rejectHead(this.failure(error));
      return;
    }
    this.#error = { cause: error };
    // A failed body gives its error, not the bytes still queued (as undici's body stream did).
    this.#chunks = [];
    this.#queued = 0;
    if (this.#discarding) this.done();
    else if (this.#whole !== null) this.#settleWhole();
    else if (this.#reader !== null) this.#wakeReader();
  }

  // ------------------------------------------------------------------ the relay's side

  /**
   * The response body as chunks; a reader's early `return` reads the rest out in the background (see the class).
   * Read it this way or with `whole`, not both.
   */
  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    return {
      next: () => this.#next(),
      return: () => {
        this.#discard();
        return Promise.resolve(DONE);
      },
    };
  }

  /**
   * The whole response body (one chunk as it came, several joined), or the exchange's failure. While it waits the
   * idle timer runs, refreshed by every chunk: the relay is always waiting here, so no pause can pass for silence.
   */
  whole(): Promise<Buffer> {
    if (this.#error !== null) return Promise.reject(this.#failed());
    if (this.#ended) return Promise.resolve(this.#wholeBody());
    const whole = new Promise<Buffer>((resolve, reject) => {
      this.#whole = { resolve, reject };
    });
    this.#startIdle();
    // Resuming may deliver the rest at once (and settle `whole`), so it comes after the waiter is in place.
    if (this.#controller?.paused === true) this.#controller.resume();
    return whole;
  }

  /** Stops the timers and forgets the caller's signal (the exchange has ended or been given up). */
  done(): void {
    if (this.#timersDone) return;
    this.#timersDone = true;
    this.#waiting = false;
    if (this.#headTimer !== null) clearTimeout(this.#headTimer);
    if (this.#idle !== null) clearTimeout(this.#idle);
    this.#headTimer = null;
    this.#idle = null;
    this.caller.removeEventListener('abort', this.#onCallerAbort);
  }

  /** The response's way to stop reading: `destroy`. */
  discard(): void {
    this.destroy();
  }

  /** Stops reading and frees the connection: a body not read to its end destroys it. */
  destroy(): void {
    this.done();
    if (!this.#ended && this.#error === null) this.#stop(new Error('upstream body discarded'));
  }

  /** Why the exchange failed: a timer of ours, the caller leaving, or what the connection said. */
  failure(error: unknown): UpstreamConnectionError {
    return new UpstreamConnectionError(this.expired ?? classify(error, this.caller), { cause: error });
  }

  #next(): Promise<IteratorResult<Buffer>> {
    if (this.#chunks.length > 0) return Promise.resolve({ done: false, value: this.#take() });
    if (this.#error !== null) return Promise.reject(this.#failed());
    if (this.#ended) {
      this.done();
      return Promise.resolve(DONE);
    }
    this.#startIdle();
    return new Promise((resolve, reject) => {
      this.#reader = { resolve, reject };
    });
  }

  /** Hands the waiting reader (there is one) a chunk, the failure or the end, whichever has come. */
  #wakeReader(): void {
    const reader = this.#reader as Waiter<IteratorResult<Buffer>>;
    this.#reader = null;
    this.#waiting = false;
    if (this.#chunks.length > 0) reader.resolve({ done: false, value: this.#take() });
    else if (this.#error !== null) reader.reject(this.#failed());
    else if (this.#ended) {
      this.done();
      reader.resolve(DONE);
    }
  }

  #settleWhole(): void {
    const whole = this.#whole as Waiter<Buffer>;
    this.#whole = null;
    if (this.#error !== null) whole.reject(this.#failed());
    else whole.resolve(this.#wholeBody());
  }

  #wholeBody(): Buffer {
    this.done();
    return this.#chunks.length === 0 ? EMPTY : this.#take();
  }

  #take(): Buffer {
    const chunks = this.#chunks;
    const value = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, this.#queued);
    this.#chunks = [];
    this.#queued = 0;
    if (this.#controller?.paused === true) this.#controller.resume();
    return value;
  }

  #failed(): UpstreamConnectionError {
    this.done();
    return this.failure((this.#error as { cause: unknown }).cause);
  }

  /** The reader stopped early: read out a small remainder for the connection's sake, else destroy it. */
  #discard(): void {
    this.#chunks = [];
    this.#queued = 0;
    if (this.#ended || this.#error !== null) {
      this.done();
      return;
    }
    this.#discarding = true;
    if (this.#controller?.paused === true) this.#controller.resume();
    this.#startIdle();
  }

  #startIdle(): void {
    if (this.#timersDone) return;
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

  #expire(kind: ExchangeTimeout): void {
    if (this.#timersDone) return;
    this.expired = kind;
    this.#stop(new Error(`upstream ${kind}`));
  }

  #stop(reason: Error): void {
    if (this.#stopReason !== null) return;
    this.#stopReason = reason;
    this.#controller?.abort(reason);
  }
}

function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error('aborted');
}
