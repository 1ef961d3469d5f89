import type { CallerSignal } from './caller-signal.js';
import type { AnswerStream, ResponseSink } from './response-sink.js';

/**
 * The caller's side of a metered request: the first byte of its answer, whole or streamed, is told to its frame
 * (`onFirstByte`, which marks it on the meter) as it leaves, and the end of a streamed answer is held back until
 * `release`: the request is settled before its stream ends, so its usage row exists once the caller has the whole
 * answer.
 */
export class MeteredSink implements ResponseSink {
  #ends: Array<() => void> = [];
  #holding = true;
  // The inner sink's, copied once: they never change for a request.
  readonly requestId: string;
  readonly startedAt: number;
  readonly callerGone: CallerSignal;

  constructor(
    private readonly sink: ResponseSink,
    private readonly onFirstByte: () => void,
  ) {
    this.requestId = sink.requestId;
    this.startedAt = sink.startedAt;
    this.callerGone = sink.callerGone;
  }

  onCallerGone(listener: () => void): () => void {
    const callerGone = this.callerGone;
    callerGone.addEventListener('abort', listener);
    return () => callerGone.removeEventListener('abort', listener);
  }

  send(answer: Parameters<ResponseSink['send']>[0]): void {
    this.onFirstByte();
    this.sink.send(answer);
  }

  cut(error: Error): void {
    this.sink.cut(error);
  }

  openStream(headers: Record<string, string>, signal: CallerSignal, onFirstByte: () => void): AnswerStream {
    const stream = this.sink.openStream(headers, signal, () => {
      this.onFirstByte();
      onFirstByte();
    });
    return {
      get started() {
        return stream.started;
      },
      write: (chunk) => stream.write(chunk),
      end: (chunk) => {
        if (this.#holding) this.#ends.push(() => stream.end(chunk));
        else stream.end(chunk);
      },
    };
  }

  /** Ends the streams whose end was held. */
  release(): void {
    this.#holding = false;
    const ends = this.#ends;
    this.#ends = [];
    for (const end of ends) end();
  }
}
