/**
 * Server-sent events (https://html.spec.whatwg.org/multipage/server-sent-events.html), the one framing reader for
 * every SSE wire, on the client side (pass-through observers) and the upstream side (stream parsers) alike.
 *
 * Lines end in LF, CRLF or a lone CR; a blank line ends an event. The splitter works on bytes and never decodes or
 * copies more than needed: a UTF-8 continuation byte is never CR or LF, so splitting on bytes is safe, and each
 * event it returns is a whole UTF-8 text that includes its blank-line terminator.
 */

const LF = 0x0a;
const CR = 0x0d;

/** The fields of one event: its `event:` name (null when it has none) and its `data:` lines joined with LF. */
export interface SseMessage {
  event: string | null;
  data: string;
}

/**
 * Splits a byte stream of server-sent events into whole events. A CR that ends the buffer after a CRLF line may be
 * the first half of a CRLF blank line, so that event waits for the next byte; after an LF or lone-CR line it ends
 * the event at once. Streams that keep to one line-end style therefore split the same under any chunking.
 */
export class SseEventSplitter {
  #rest: Buffer | null = null;
  /** Chunks after `#rest` with no line end in them, joined only once a line end comes (one long event is copied once). */
  #waiting: Buffer[] = [];

  push(chunk: Buffer): Buffer[] {
    if (this.#rest !== null && this.#rest.at(-1) !== CR && !chunk.includes(LF) && !chunk.includes(CR)) {
      // No event can end inside a chunk without a line end (a CR just before it might be half of a CRLF: scanned).
      this.#waiting.push(chunk);
      return [];
    }
    const buffer = this.#rest === null ? chunk : this.#joined(chunk);
    const events: Buffer[] = [];
    const hasCarriageReturn = buffer.includes(CR);
    let start = 0;
    for (;;) {
      const end = hasCarriageReturn ? eventEndAnyLineEnd(buffer, start) : eventEndLineFeed(buffer, start);
      if (end < 0) break;
      events.push(buffer.subarray(start, end));
      start = end;
    }
    this.#rest = start < buffer.length ? buffer.subarray(start) : null;
    return events;
  }

  /** `#rest`, the chunks waiting after it and `chunk`, as one buffer; nothing waits after. */
  #joined(chunk: Buffer): Buffer {
    const rest = this.#rest as Buffer;
    if (this.#waiting.length === 0) return Buffer.concat([rest, chunk], rest.length + chunk.length);
    this.#waiting.unshift(rest);
    this.#waiting.push(chunk);
    const buffer = Buffer.concat(this.#waiting);
    this.#waiting.length = 0;
    return buffer;
  }

  /** What is left when the stream ends (an unterminated last event). */
  flush(): Buffer | null {
    const rest = this.#rest === null || this.#waiting.length === 0 ? this.#rest : Buffer.concat([this.#rest, ...this.#waiting]);
    this.#rest = null;
    this.#waiting.length = 0;
    return rest;
  }
}

/** End (exclusive) of the first event starting at `from` in LF-only text, or -1 if it has not ended yet. */
function eventEndLineFeed(buffer: Buffer, from: number): number {
  let index = buffer.indexOf(LF, from);
  while (index >= 0) {
    if (buffer[index + 1] === LF) return index + 2;
    index = buffer.indexOf(LF, index + 1);
  }
  return -1;
}

/** End (exclusive) of the first event starting at `from` with any line ends, or -1 if it has not ended yet. */
function eventEndAnyLineEnd(buffer: Buffer, from: number): number {
  let lineStart = from;
  let previousLineEndedInCrLf = false;
  for (let index = from; index < buffer.length; index += 1) {
    const byte = buffer[index];
    if (byte !== LF && byte !== CR) continue;
    const blankLine = index === lineStart;
    if (byte === CR && index + 1 === buffer.length) {
      // The next byte may be the LF of a CRLF: a blank line after an LF or lone-CR line ends the event anyway.
      return blankLine && index > from && !previousLineEndedInCrLf ? index + 1 : -1;
    }
    const lineEnd = byte === CR && buffer[index + 1] === LF ? index + 2 : index + 1;
    if (blankLine) return lineEnd;
    previousLineEndedInCrLf = lineEnd - index === 2;
    lineStart = lineEnd;
    index = lineEnd - 1;
  }
  return -1;
}

/** The lines of one event, without their line ends (an event with no CR is split on LF alone, natively). */
function eventLines(event: Buffer): string[] {
  const text = event.toString('utf8');
  return event.includes(CR) ? text.split(/\r\n|\r|\n/) : text.split('\n');
}

const COLON = 0x3a;
const SPACE = 0x20;
/** The bytes of `data:`. */
const DATA_FIELD = [0x64, 0x61, 0x74, 0x61, COLON] as const;

/**
 * The value of an event that is one `data:` line and its blank line, both ended by LF or both by CRLF (every event
 * of most upstreams' streams: Gemini's end in CRLF), read off its bytes without splitting lines: what `eventData`
 * gives for it. Null for any other event.
 */
function soleDataLine(event: Buffer): string | null {
  const length = event.length;
  if (event[length - 1] !== LF) return null;
  // Where the data line ends: the event is that line, its line end, and a blank line with the same line end.
  let lineEnd: number;
  if (event[length - 2] === LF) {
    lineEnd = length - 2;
    if (event.indexOf(LF) !== lineEnd || event.includes(CR)) return null;
  } else if (event[length - 2] === CR && event[length - 3] === LF && event[length - 4] === CR) {
    lineEnd = length - 4;
    if (event.indexOf(CR) !== lineEnd || event.indexOf(LF) !== lineEnd + 1) return null;
  } else {
    return null;
  }
  if (lineEnd < DATA_FIELD.length) return null;
  for (let at = 0; at < DATA_FIELD.length; at += 1) if (event[at] !== DATA_FIELD[at]) return null;
  return event.toString('utf8', event[DATA_FIELD.length] === SPACE ? DATA_FIELD.length + 1 : DATA_FIELD.length, lineEnd);
}

/** One line's field name and value: the value loses one leading space; a line without a colon is a bare name. */
function field(line: string): [name: string, value: string] {
  const colon = line.indexOf(':');
  if (colon < 0) return [line, ''];
  const value = line.slice(colon + 1);
  return [line.slice(0, colon), value.startsWith(' ') ? value.slice(1) : value];
}

/**
 * The `data:` payload of an event whose lines all end in LF, read off its bytes line by line (an LF byte is never
 * part of a longer UTF-8 sequence, so each line's bytes decode to that line of the decoded event): only the values
 * of its data lines are decoded.
 */
function lineFeedEventData(event: Buffer): string | null {
  let data: string | null = null;
  let start = 0;
  while (start < event.length) {
    let end = event.indexOf(LF, start);
    if (end < 0) end = event.length;
    // A data line: `data` alone, or `data` and a colon, the value after it losing one leading space.
    if (end - start >= 4 && isDataName(event, start) && (end - start === 4 || event[start + 4] === COLON)) {
      let from = Math.min(start + 5, end);
      if (from < end && event[from] === SPACE) from += 1;
      const value = event.toString('utf8', from, end);
      data = data === null ? value : `${data}\n${value}`;
    }
    start = end + 1;
  }
  return data;
}

function isDataName(event: Buffer, at: number): boolean {
  return event[at] === DATA_FIELD[0] && event[at + 1] === DATA_FIELD[1] && event[at + 2] === DATA_FIELD[2] && event[at + 3] === DATA_FIELD[3];
}

/** The `data:` payload of one event (its data lines joined with LF), or null if it has none. */
export function eventData(event: Buffer): string | null {
  const sole = soleDataLine(event);
  if (sole !== null) return sole;
  if (!event.includes(CR)) return lineFeedEventData(event);
  let data: string | null = null;
  for (const line of eventLines(event)) {
    if (!line.startsWith('data')) continue;
    const [name, value] = field(line);
    if (name === 'data') data = data === null ? value : `${data}\n${value}`;
  }
  return data;
}

/** The name and data of one event; null for an event with neither (comments and keep-alives). */
export function sseMessage(event: Buffer): SseMessage | null {
  let name: string | null = null;
  const data: string[] = [];
  for (const line of eventLines(event)) {
    if (line === '' || line.startsWith(':')) continue;
    const [fieldName, value] = field(line);
    if (fieldName === 'event') name = value;
    else if (fieldName === 'data') data.push(value);
  }
  return data.length === 0 && name === null ? null : { event: name, data: data.join('\n') };
}

/** The data of one event parsed as a JSON object; null when it has no data or the data is not a JSON object. */
export function eventJsonObject(event: Buffer): Record<string, unknown> | null {
  const data = eventData(event);
  if (data === null) return null;
  try {
    const parsed = JSON.parse(data) as unknown;
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Server-sent event messages from a byte stream that arrives in chunks split anywhere. */
export class SseMessageReader {
  readonly #splitter = new SseEventSplitter();

  /** The messages the chunk completes. */
  push(chunk: Buffer): SseMessage[] {
    return messagesOf(this.#splitter.push(chunk));
  }

  /** The message left when the stream ends (an unterminated last event is read as if it had ended). */
  end(): SseMessage[] {
    const rest = this.#splitter.flush();
    return rest === null ? [] : messagesOf([rest]);
  }
}

function messagesOf(events: Buffer[]): SseMessage[] {
  const messages: SseMessage[] = [];
  for (const event of events) {
    const message = sseMessage(event);
    if (message !== null) messages.push(message);
  }
  return messages;
}

/**
 * The messages of a byte stream, as the batches each chunk completes: one asynchronous step per chunk rather than
 * per message (a stream chunk usually holds several).
 */
export async function* readSseMessageBatches(body: AsyncIterable<Buffer>): AsyncIterable<SseMessage[]> {
  const reader = new SseMessageReader();
  for await (const chunk of body) {
    const messages = reader.push(chunk);
    if (messages.length > 0) yield messages;
  }
  const rest = reader.end();
  if (rest.length > 0) yield rest;
}
