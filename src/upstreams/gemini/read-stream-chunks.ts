import { StringDecoder } from 'node:string_decoder';
import { eventPayload } from '../../wire/gemini/event-payload.js';
import { JsonArraySplitter } from '../../wire/gemini/json-array-splitter.js';
import { SseEventSplitter } from '../../wire/sse-event-splitter.js';

type Framing = { kind: 'array'; decoder: StringDecoder; splitter: JsonArraySplitter } | { kind: 'sse'; splitter: SseEventSplitter };

/**
 * The JSON text of each chunk of a `streamGenerateContent` body, in either framing: the first non-blank byte decides
 * (`[` → the streamed JSON array, anything else → SSE). The JSON array is decoded with a streaming UTF-8 decoder, so
 * a character split across two network chunks is never broken; SSE is split on bytes, whole events at a time.
 */
export async function* readStreamChunks(body: AsyncIterable<Buffer>): AsyncIterable<string> {
  let framing: Framing | null = null;
  let pending: Buffer[] = [];
  for await (const chunk of body) {
    if (framing === null) {
      pending.push(chunk);
      const head = Buffer.concat(pending);
      const first = head.toString('utf8').trimStart()[0];
      if (first === undefined) continue;
      framing = first === '['
        ? { kind: 'array', decoder: new StringDecoder('utf8'), splitter: new JsonArraySplitter() }
        : { kind: 'sse', splitter: new SseEventSplitter() };
      pending = [];
      yield* pushChunk(framing, head);
      continue;
    }
    yield* pushChunk(framing, chunk);
  }
  if (framing?.kind === 'array') {
    const rest = framing.decoder.end();
    if (rest !== '') yield* framing.splitter.push(rest);
  } else if (framing?.kind === 'sse') {
    const rest = framing.splitter.flush();
    const payload = rest === null ? null : eventPayload(rest);
    if (payload !== null) yield payload;
  }
}

function* pushChunk(framing: Framing, chunk: Buffer): Iterable<string> {
  if (framing.kind === 'array') {
    yield* framing.splitter.push(framing.decoder.write(chunk));
    return;
  }
  for (const event of framing.splitter.push(chunk)) {
    const payload = eventPayload(event);
    if (payload !== null) yield payload;
  }
}
