/**
 * Incremental reader of server-sent events: text goes in at arbitrary boundaries, the `data:` payload of each
 * complete event comes out. Events end at a blank line in any of the three line-end styles (Gemini uses CRLF).
 * An event with no `data:` line whose text is itself JSON (Google sometimes writes a bare error object into a
 * 200 stream) is returned whole.
 */
export class SseDataSplitter {
  #buffer = '';

  push(text: string): string[] {
    this.#buffer += text;
    const payloads: string[] = [];
    const boundary = /\r\n\r\n|\n\n|\r\r/g;
    let start = 0;
    for (let match = boundary.exec(this.#buffer); match !== null; match = boundary.exec(this.#buffer)) {
      const payload = payloadOf(this.#buffer.slice(start, match.index));
      if (payload !== null) payloads.push(payload);
      start = match.index + match[0].length;
    }
    this.#buffer = this.#buffer.slice(start);
    return payloads;
  }

  /** The payload of an unterminated last event, if any. */
  flush(): string[] {
    const payload = payloadOf(this.#buffer);
    this.#buffer = '';
    return payload === null ? [] : [payload];
  }
}

function payloadOf(event: string): string | null {
  let data: string | null = null;
  for (const line of event.split(/\r\n|\r|\n/)) {
    if (!line.startsWith('data:')) continue;
    const value = line.slice(line[5] === ' ' ? 6 : 5);
    data = data === null ? value : `${data}\n${value}`;
  }
  if (data !== null) return data;
  const trimmed = event.trim();
  return trimmed.startsWith('{') ? trimmed : null;
}
