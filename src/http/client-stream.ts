import type { ServerResponse } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { AnswerStream } from '../relay/response-sink.js';
import type { CallerSignal } from '../relay/caller-signal.js';

/**
 * The caller's side of a stream. The status line and headers go out with the first bytes, not before, so a
 * failure before anything was written can still be retried on another channel or answered as a plain error.
 */
/**
 * How long the writes of one turn of the event loop may go on before the stream lets the loop run: a relay whose
 * upstream has data buffered and whose caller takes it at once would otherwise go from write to write in
 * microtasks, holding timers and every other request for as long as the answer lasts.
 */
const MILLISECONDS_PER_TURN = 10;

export class ClientStream implements AnswerStream {
  #started = false;
  #corked = false;
  /** When the first write of this turn of the event loop was made; null between turns. */
  #turnStartedAt: number | null = null;
  readonly #uncork = (): void => {
    if (!this.#corked) return;
    this.#corked = false;
    this.out.uncork();
  };
  readonly #endTurn = (): void => {
    this.#turnStartedAt = null;
    this.#uncork();
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
    const now = performance.now();
    if (this.#turnStartedAt === null) {
      this.#turnStartedAt = now;
      // Ends the turn's writes: they leave corked together, uncorked once the turn is over.
      setImmediate(this.#endTurn);
    }
    if (!this.#corked) {
      this.#corked = true;
      this.out.cork();
    }
    if (!this.out.write(chunk)) {
      this.#uncork();
      await this.#drained();
    } else if (now - this.#turnStartedAt > MILLISECONDS_PER_TURN) {
      // The turn's end (queued before) runs first: the writes leave, then the loop serves the rest.
      await nextTurn();
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
    writeAnswerHead(this.out, 200, ['cache-control', 'no-cache', 'x-accel-buffering', 'no'], this.headers, true);
    this.onFirstByte();
  }

  /**
   * Waits until the caller's socket takes writes again. The socket's own state decides, not the response's: the
   * response can say "full" (its write returned false) while the socket, once uncorked, has taken everything or stays
   * under its mark, and then neither emits a 'drain' (node:http emits the response's only from the socket's, and at
   * times inside the uncork itself), so waiting for the response's would wait forever.
   */
  #drained(): Promise<void> {
    const socket = this.out.socket;
    if (socket !== null && !socket.writableNeedDrain) return Promise.resolve();
    const emitter = socket ?? this.out;
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        emitter.off('drain', onDrain);
        reject(this.signal.reason);
      };
      const onDrain = (): void => {
        this.signal.removeEventListener('abort', onAbort);
        resolve();
      };
      emitter.once('drain', onDrain);
      this.signal.addEventListener('abort', onAbort, { once: true });
      if (this.signal.aborted) onAbort();
    });
  }
}

/** A whole JSON answer at once. */
export function sendJsonBody(out: ServerResponse, status: number, body: string | Buffer, contentType: string, headers: Record<string, string> | undefined): void {
  writeAnswerHead(out, status, ['content-type', contentType, 'content-length', String(Buffer.byteLength(body))], headers, false);
  out.end(body);
}

/**
 * An answer's status line and headers in one `writeHead`, as one flat `[name, value, …]` list: node:http validates
 * each name and value as it writes the head, and keeps no table of them (setting each header first costs a
 * validation, a lower-cased copy and a table entry per header, then a second pass over the table). `own` are the
 * writer's headers (pairs, lower-case names, taken as the list to send), `headers` the answer's (lower-case names as
 * the gateway writes them); each name is sent once: where both name one, `ownWins` says whose value is sent.
 */
function writeAnswerHead(out: ServerResponse, status: number, own: string[], headers: Record<string, string> | undefined, ownWins: boolean): void {
  const ownLength = own.length;
  if (headers !== undefined) {
    // The own names are a few: looked for in place, as the answer's names are added.
    names: for (const name in headers) {
      for (let at = 0; at < ownLength; at += 2) {
        if (own[at] !== name) continue;
        if (!ownWins) own[at + 1] = headers[name] as string;
        continue names;
      }
      own.push(name, headers[name] as string);
    }
  }
  out.writeHead(status, own);
}
