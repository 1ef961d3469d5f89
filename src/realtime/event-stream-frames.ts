/** A blank line: the end of an event. */
const EVENT_END = /\r?\n\r?\n/g;
const HAS_EVENT_END = /\r?\n\r?\n/;
/** The longest event end minus one: what of the text before a chunk can start an event end inside it. */
const EVENT_END_OVERLAP = 3;

/**
 * Reads server-sent events as they arrive in chunks: each complete event's `data` (its `data:` lines joined), in
 * order. Comments, `event:` and `id:` lines are dropped (a Responses event's JSON names its own type). An event that
 * spans many chunks is kept as its pieces, searched for its end only in the text each chunk adds and joined once.
 */
export class EventStreamFrames {
  /** Text after the last whole event, in the pieces it came in. */
  #pending: string[] = [];
  /** The last characters of the pending text, for an event end that a chunk completes. */
  #tail = '';
  readonly #decoder = new TextDecoder();

  push(chunk: Buffer): string[] {
    const text = this.#decoder.decode(chunk, { stream: true });
    if (!HAS_EVENT_END.test(this.#tail + text)) {
      if (text !== '') this.#pending.push(text);
      this.#tail = (this.#tail + text).slice(-EVENT_END_OVERLAP);
      return [];
    }
    const pending = this.#pending.join('') + text;
    const events: string[] = [];
    let start = 0;
    EVENT_END.lastIndex = 0;
    for (let match = EVENT_END.exec(pending); match !== null; match = EVENT_END.exec(pending)) {
      const block = pending.slice(start, match.index);
      start = match.index + match[0].length;
      const data = block.split(/\r?\n/).filter((line) => line.startsWith('data:')).map((line) => line.slice(line.startsWith('data: ') ? 6 : 5));
      if (data.length > 0) events.push(data.join('\n'));
    }
    const rest = pending.slice(start);
    this.#pending = rest === '' ? [] : [rest];
    this.#tail = rest.slice(-EVENT_END_OVERLAP);
    return events;
  }
}
