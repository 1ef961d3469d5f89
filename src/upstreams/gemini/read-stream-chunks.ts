import { StringDecoder } from 'node:string_decoder';
import { JsonArraySplitter } from './json-array-splitter.js';
import { SseDataSplitter } from './sse-data-splitter.js';

interface Splitter {
  push(text: string): string[];
}

/**
 * The JSON text of each chunk of a `streamGenerateContent` body, in either framing: the first non-blank character
 * decides (`[` → the streamed JSON array, anything else → SSE). UTF-8 is decoded with a streaming decoder, so a
 * character split across two network chunks is never broken.
 */
export async function* readStreamChunks(body: AsyncIterable<Buffer>): AsyncIterable<string> {
  const decoder = new StringDecoder('utf8');
  let splitter: Splitter | null = null;
  let sse: SseDataSplitter | null = null;
  let pending = '';
  for await (const chunk of body) {
    const text = decoder.write(chunk);
    if (splitter === null) {
      pending += text;
      const first = pending.trimStart()[0];
      if (first === undefined) continue;
      if (first === '[') splitter = new JsonArraySplitter();
      else splitter = sse = new SseDataSplitter();
      yield* splitter.push(pending);
      pending = '';
      continue;
    }
    yield* splitter.push(text);
  }
  const rest = decoder.end();
  if (splitter !== null && rest !== '') yield* splitter.push(rest);
  if (sse !== null) yield* sse.flush();
}
