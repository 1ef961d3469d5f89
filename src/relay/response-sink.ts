import type { CallerSignal } from './caller-signal.js';

/** A streamed answer to the caller: the status line and headers leave with the first bytes, not before. */
export interface AnswerStream {
  /** Whether anything reached the caller (a failure before that can still be retried or answered as an error). */
  readonly started: boolean;
  write(chunk: string | Buffer): Promise<void>;
  end(chunk?: string | Buffer): void;
}

/** A whole answer at once. */
export interface WholeAnswer {
  status: number;
  body: string | Buffer;
  contentType: string;
  headers: Record<string, string>;
}

/**
 * The caller's side of one request as the relay sees it: which request, since when, whether the caller is still
 * there, and where the answer goes. src/http implements it over the caller's connection; the relay writes to the
 * caller through nothing else.
 */
export interface ResponseSink {
  readonly requestId: string;
  /** `performance.now()` when the request arrived. */
  readonly startedAt: number;
  /** Aborted once if the caller leaves before the answer is complete. */
  readonly callerGone: CallerSignal;
  /** Calls `listener` once if the caller leaves before the answer is complete; the returned function stops listening. */
  onCallerGone(listener: () => void): () => void;
  send(answer: WholeAnswer): void;
  /** A stream that stops waiting for the caller to drain when `signal` aborts; `onFirstByte` runs as the first bytes leave. */
  openStream(headers: Record<string, string>, signal: CallerSignal, onFirstByte: () => void): AnswerStream;
  /** Ends the connection without the final chunk, so the client sees the answer cut (for streams with no in-band error). */
  cut(error: Error): void;
}
