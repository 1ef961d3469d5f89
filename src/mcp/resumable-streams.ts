/**
 * The SSE streams `/mcp` answers long requests with, held by the instance that runs them so a client whose
 * connection broke can resume one (`GET` with `Last-Event-ID`): every event is kept with its id until the stream has
 * been finished for `KEEP_AFTER_END_MS`, and a resumption replays the events after the id it names, then follows the
 * stream live until it ends. Event ids are `<stream>.<sequence>`, the stream a random 128-bit id, so an id names its
 * stream and cannot be guessed; a stream is bound to the key and session that opened it and is as unknown to any
 * other. Bounded: at most `MAX_STREAMS` per instance (the oldest finished, else the oldest, are dropped first) and
 * `MAX_BYTES` of events per stream (the oldest progress events are dropped first; the answer is always kept, and a
 * resumption from an event no longer held is refused rather than replayed with a gap). Only the instance holding a
 * stream can replay it: another instance answers 404, and the client sends its request again.
 */
import { randomBytes } from 'node:crypto';

/** How long a finished stream stays resumable. */
const KEEP_AFTER_END_MS = 5 * 60 * 1000;
const MAX_STREAMS = 500;
const MAX_BYTES = 4 * 1024 * 1024;

export interface StreamEvent {
  id: string;
  /** One JSON-RPC message as JSON text, or '' for the priming event. */
  data: string;
}

/** One SSE stream: its events so far and who follows it live. */
export class HeldStream {
  readonly id = randomBytes(16).toString('base64url');
  readonly events: Array<StreamEvent & { sequence: number; bytes: number }> = [];
  #sequence = 0;
  #bytes = 0;
  #followers = new Set<(event: StreamEvent | null) => void>();
  endedAt: number | null = null;

  constructor(readonly keyId: string, readonly session: string, readonly openedAt: number) {}

  /** Adds an event (an empty `data` primes the stream) and sends it to every follower. */
  push(data: string): StreamEvent {
    this.#sequence += 1;
    const event = { id: `${this.id}.${this.#sequence}`, data, sequence: this.#sequence, bytes: Buffer.byteLength(data) };
    this.events.push(event);
    this.#bytes += event.bytes;
    // The oldest events go first past the bound, the newest (the answer, when it is the last) always stays.
    while (this.#bytes > MAX_BYTES && this.events.length > 1) this.#bytes -= (this.events.shift() as { bytes: number }).bytes;
    for (const follower of this.#followers) follower(event);
    return event;
  }

  end(now: number): void {
    this.endedAt = now;
    for (const follower of this.#followers) follower(null);
    this.#followers.clear();
  }

  /**
   * The events after `sequence` (null when some of them are no longer held) and, for a stream still running, a
   * subscription to the next ones (`null` is sent when it ends); the returned function ends the subscription.
   */
  resumeAfter(sequence: number, follow: (event: StreamEvent | null) => void): { replay: StreamEvent[]; unfollow: () => void } | null {
    const first = this.events[0];
    if (first !== undefined && first.sequence > sequence + 1) return null;
    const replay = this.events.filter((event) => event.sequence > sequence);
    if (this.endedAt === null) this.#followers.add(follow);
    return { replay, unfollow: () => this.#followers.delete(follow) };
  }
}

export class ResumableStreams {
  readonly #streams = new Map<string, HeldStream>();

  open(keyId: string, session: string, now: number): HeldStream {
    this.#sweep(now);
    const stream = new HeldStream(keyId, session, now);
    this.#streams.set(stream.id, stream);
    return stream;
  }

  /** The stream an event id names and its sequence, when this instance holds it for this key and session. */
  find(eventId: string, keyId: string, session: string, now: number): { stream: HeldStream; sequence: number } | null {
    this.#sweep(now);
    const dot = eventId.lastIndexOf('.');
    const sequence = Number(eventId.slice(dot + 1));
    const stream = dot <= 0 ? undefined : this.#streams.get(eventId.slice(0, dot));
    if (stream === undefined || !Number.isSafeInteger(sequence) || sequence < 0) return null;
    if (stream.keyId !== keyId || stream.session !== session) return null;
    return { stream, sequence };
  }

  #sweep(now: number): void {
    for (const [id, stream] of this.#streams) if (stream.endedAt !== null && now - stream.endedAt > KEEP_AFTER_END_MS) this.#streams.delete(id);
    if (this.#streams.size < MAX_STREAMS) return;
    const byAge = [...this.#streams.values()].sort((a, b) => Number(a.endedAt === null) - Number(b.endedAt === null) || a.openedAt - b.openedAt);
    for (const stream of byAge.slice(0, this.#streams.size - MAX_STREAMS + 1)) this.#streams.delete(stream.id);
  }
}

/** One event as SSE text. */
export function sseEvent(event: StreamEvent, retryMs?: number): string {
  return `id: ${event.id}\n${retryMs === undefined ? '' : `retry: ${retryMs}\n`}data: ${event.data}\n\n`;
}
