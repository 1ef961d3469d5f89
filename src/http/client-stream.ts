import type { ServerResponse } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { AnswerStream } from '../relay/response-sink.js';
import type { CallerSignal } from '../relay/caller-signal.js';

/**
 * How long the writes of one turn of the event loop may go on before the stream lets the loop run: a relay whose
 * upstream has data buffered and whose caller takes it at once would otherwise go from write to write in
 * microtasks, holding timers and every other request for as long as the answer lasts.
 */
const MILLISECONDS_PER_TURN = 10;

/**
 * The ends of this turn's writes, of every stream that wrote in it: one immediate (run once the loop has read what
 * this turn's I/O brought) sends them all, instead of one immediate per stream and turn.
 */
let turnEnds: Array<() => void> = [];
let turnEndQueued = false;

function endTurn(): void {
  const ends = turnEnds;
  turnEnds = [];
  turnEndQueued = false;
  for (const end of ends) end();
}

function atTurnEnd(end: () => void): void {
  turnEnds.push(end);
  if (turnEndQueued) return;
  turnEndQueued = true;
  setImmediate(endTurn);
}

/**
 * The caller's side of a stream. The status line and headers go out with the first bytes, not before, so a
 * failure before anything was written can still be retried on another channel or answered as a plain error.
 *
 * The writes of one turn of the event loop are gathered and leave together at its end as one write to the response
 * (one HTTP chunk, one system call), or with the stream's end when that comes in the same turn: node:http alone
 * frames every write as a chunk of its own (its length line, the data, a line break) and flushes after each callback.
 * Nothing waits longer than the turn it was written in, and a turn's writes leave at once when they reach the
 * socket's high-water mark.
 */
export class ClientStream implements AnswerStream {
  #started = false;
  /** What was written in this turn and has not left yet. */
  #pending: Array<string | Buffer> = [];
  /** Their length (characters for a string: an estimate, only compared with the high-water mark). */
  #pendingLength = 0;
  /** When the first write of this turn of the event loop was made; null between turns. */
  #turnStartedAt: number | null = null;
  /** The last write to the response found it full: the next write waits until the caller's socket drains. */
  #full = false;
  readonly #endTurn = (): void => {
    this.#turnStartedAt = null;
    this.#flush();
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

  async write(chunk: string | Buffer): Promise<void> {
    if (chunk.length === 0) return;
    if (this.#full) {
      this.#full = false;
      await this.#drained();
    }
    this.#start();
    const now = performance.now();
    if (this.#turnStartedAt === null) {
      this.#turnStartedAt = now;
      atTurnEnd(this.#endTurn);
    }
    this.#pending.push(chunk);
    this.#pendingLength += chunk.length;
    if (this.#pendingLength >= this.out.writableHighWaterMark) {
      this.#flush();
      if (this.#full) {
        this.#full = false;
        await this.#drained();
      }
    } else if (now - this.#turnStartedAt > MILLISECONDS_PER_TURN) {
      // The turn's end (queued before) runs first: the writes leave, then the loop serves the rest.
      await nextTurn();
    }
  }

  end(chunk?: string | Buffer): void {
    this.#start();
    if (chunk !== undefined && chunk.length > 0) {
      this.#pending.push(chunk);
      this.#pendingLength += chunk.length;
    }
    // The writes still waiting for the turn's end leave with the end, in one system call.
    const rest = this.#take();
    if (rest === null) this.out.end();
    else this.out.end(rest);
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

  /** Sends what waits, as one write. */
  #flush(): void {
    const data = this.#take();
    if (data !== null && !this.out.write(data)) this.#full = true;
  }

  /** What waits, joined into one piece (null: nothing); a string stays a string, so it is encoded once, by the socket. */
  #take(): string | Buffer | null {
    const pending = this.#pending;
    if (pending.length === 0) return null;
    this.#pendingLength = 0;
    if (pending.length === 1) {
      const only = pending[0] as string | Buffer;
      pending.length = 0;
      return only;
    }
    this.#pending = [];
    let strings = true;
    for (const piece of pending) {
      if (typeof piece !== 'string') {
        strings = false;
        break;
      }
    }
    if (strings) return (pending as string[]).join('');
    return Buffer.concat(pending.map((piece) => (typeof piece === 'string' ? Buffer.from(piece) : piece)));
  }

  /**
   * Waits until the caller's socket takes writes again. The socket's own state decides, not the response's: the
   * response can say "full" (its write returned false) while the socket has taken everything or stays under its
   * mark, and then neither emits a 'drain' (node:http emits the response's only from the socket's), so waiting for
   * the response's would wait forever.
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
export function sendJsonBody(out: ServerResponse, status: number, body: string | Buffer, contentType: string, headers: Record<string, string>): void {
  out.statusCode = status;
  out.setHeader('content-type', contentType);
  out.setHeader('content-length', Buffer.byteLength(body));
  for (const name in headers) out.setHeader(name, headers[name] as string);
  out.end(body);
}
