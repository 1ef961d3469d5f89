/**
 * Splits a byte stream of server-sent events into whole events (each including its blank-line terminator),
 * without decoding or copying more than needed. A UTF-8 continuation byte is never a newline, so splitting on
 * bytes is safe. Both LF and CRLF framings are recognised.
 */
export class SseEventSplitter {
  #rest: Buffer | null = null;

  push(chunk: Buffer): Buffer[] {
    const buffer = this.#rest === null ? chunk : Buffer.concat([this.#rest, chunk]);
    const events: Buffer[] = [];
    let start = 0;
    for (;;) {
      const end = eventEnd(buffer, start);
      if (end < 0) break;
      events.push(buffer.subarray(start, end));
      start = end;
    }
    this.#rest = start < buffer.length ? buffer.subarray(start) : null;
    return events;
  }

  /** What is left when the stream ends (an unterminated last event). */
  flush(): Buffer | null {
    const rest = this.#rest;
    this.#rest = null;
    return rest;
  }
}

/** End (exclusive) of the first event starting at `from`, or -1 if it has not ended yet. */
function eventEnd(buffer: Buffer, from: number): number {
  let index = buffer.indexOf(0x0a, from);
  while (index >= 0) {
    const next = buffer[index + 1];
    if (next === 0x0a) return index + 2;
    if (next === 0x0d && buffer[index + 2] === 0x0a) return index + 3;
    index = buffer.indexOf(0x0a, index + 1);
  }
  return -1;
}

/** The `data:` payload of one event (joined lines), or null if it has none. */
export function eventData(event: Buffer): string | null {
  const text = event.toString('utf8');
  let data: string | null = null;
  for (const line of text.split(/\r?\n/)) {
    if (!line.startsWith('data:')) continue;
    const value = line.slice(line[5] === ' ' ? 6 : 5);
    data = data === null ? value : `${data}\n${value}`;
  }
  return data;
}
