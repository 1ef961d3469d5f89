import { StringDecoder } from 'node:string_decoder';

export interface SseMessage {
  event: string | null;
  data: string;
}

/**
 * Server-sent events from a byte stream, per the SSE rules: lines end in LF, CRLF or CR; `event:` names the
 * message, `data:` lines are joined with LF, a blank line dispatches, comments (`:`) are skipped. Chunk
 * boundaries may fall anywhere, inside a line or a UTF-8 character.
 */
export class SseMessageReader {
  readonly #decoder = new StringDecoder('utf8');
  #pending = '';
  #event: string | null = null;
  #data: string[] = [];
  #sawCarriageReturn = false;

  /** The messages the chunk completes. */
  push(chunk: Buffer): SseMessage[] {
    const messages: SseMessage[] = [];
    this.#lines(this.#decoder.write(chunk), messages);
    return messages;
  }

  /** The messages left when the stream ends (an unterminated last line or message is dispatched). */
  end(): SseMessage[] {
    const messages: SseMessage[] = [];
    this.#lines(this.#decoder.end(), messages);
    if (this.#pending !== '') {
      const message = this.#takeLine(this.#pending);
      this.#pending = '';
      if (message !== null) messages.push(message);
    }
    const last = this.#takeLine('');
    if (last !== null) messages.push(last);
    return messages;
  }

  #takeLine(line: string): SseMessage | null {
    if (line === '') {
      if (this.#data.length === 0 && this.#event === null) return null;
      const message = { event: this.#event, data: this.#data.join('\n') };
      this.#event = null;
      this.#data = [];
      return message;
    }
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.#event = value;
    else if (field === 'data') this.#data.push(value);
    return null;
  }

  #lines(text: string, messages: SseMessage[]): void {
    let start = 0;
    for (let index = 0; index < text.length; index++) {
      const char = text.charCodeAt(index);
      if (char === 0x0a && this.#sawCarriageReturn && index === start) {
        // the LF of a CRLF split across chunks
        this.#sawCarriageReturn = false;
        start = index + 1;
        continue;
      }
      this.#sawCarriageReturn = false;
      if (char !== 0x0a && char !== 0x0d) continue;
      const message = this.#takeLine(this.#pending + text.slice(start, index));
      this.#pending = '';
      if (message !== null) messages.push(message);
      if (char === 0x0d) {
        if (text.charCodeAt(index + 1) === 0x0a) index++;
        else if (index + 1 === text.length) this.#sawCarriageReturn = true;
      }
      start = index + 1;
    }
    this.#pending += text.slice(start);
  }
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
