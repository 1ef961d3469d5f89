import type { ServerResponse } from 'node:http';
import type { AnswerStream } from '../relay/response-sink.js';
import type { CallerSignal } from '../relay/caller-signal.js';

/**
 * The caller's side of a stream. The status line and headers go out with the first bytes, not before, so a
 * failure before anything was written can still be retried on another channel or answered as a plain error.
 */
export class ClientStream implements AnswerStream {
  #started = false;
  #corked = false;
  readonly #uncork = (): void => {
    if (!this.#corked) return;
    this.#corked = false;
    this.out.uncork();
  };

  constructor(
    private readonly out: ServerResponse,
    private readonly headers: Record<string, string>,
    private readonly signal: CallerSignal,
    private readonly onFirstByte: () => void,
  ) {}

  get started(): boolean {
    return this.#started;
  }

  /**
   * Writes of one turn of the event loop leave together, in one system call, with the stream's end when it comes in
   * that turn too (node:http alone flushes after each callback, and its end is a write of its own).
   */
  async write(chunk: string | Buffer): Promise<void> {
    if (chunk.length === 0) return;
    this.#start();
    if (!this.#corked) {
      this.#corked = true;
      this.out.cork();
      setImmediate(this.#uncork);
    }
    if (!this.out.write(chunk)) {
      this.#uncork();
      await this.#drained();
    }
  }

  end(chunk?: string | Buffer): void {
    this.#start();
    // The writes still corked on the response go out before its end (node:http's end() sends its closing chunk ahead
    // of them since Node 22), all in one system call: the socket stays corked until end() uncorks it fully.
    if (this.#corked) {
      this.out.socket?.cork();
      this.#uncork();
    }
    if (chunk !== undefined && chunk.length > 0) this.out.end(chunk);
    else this.out.end();
  }

  #start(): void {
    if (this.#started) return;
    this.#started = true;
    this.out.statusCode = 200;
    for (const name in this.headers) this.out.setHeader(name, this.headers[name] as string);
    this.out.setHeader('cache-control', 'no-cache');
    this.out.setHeader('x-accel-buffering', 'no');
    this.onFirstByte();
  }

  #drained(): Promise<void> {
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.out.off('drain', onDrain);
        reject(this.signal.reason);
      };
      const onDrain = (): void => {
        this.signal.removeEventListener('abort', onAbort);
        resolve();
      };
      this.out.once('drain', onDrain);
      this.signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** A whole JSON answer at once. */
export function sendJsonBody(out: ServerResponse, status: number, body: string | Buffer, contentType: string, headers: Record<string, string>): void {
  out.statusCode = status;
  out.setHeader('content-type', contentType);
  out.setHeader('content-length', Buffer.byteLength(body));
  for (const name in headers) out.setHeader(name, headers[name] as string);
  out.end(body);
}
