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
export async function* readSseMessages(body: AsyncIterable<Buffer>): AsyncIterable<SseMessage> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let event: string | null = null;
  let data: string[] = [];
  let sawCarriageReturn = false;

  const takeLine = (line: string): SseMessage | null => {
    if (line === '') {
      if (data.length === 0 && event === null) return null;
      const message = { event, data: data.join('\n') };
      event = null;
      data = [];
      return message;
    }
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    return null;
  };

  function* lines(text: string): Generator<SseMessage> {
    let start = 0;
    for (let index = 0; index < text.length; index++) {
      const char = text.charCodeAt(index);
      if (char === 0x0a && sawCarriageReturn && index === start) {
        // the LF of a CRLF split across chunks
        sawCarriageReturn = false;
        start = index + 1;
        continue;
      }
      sawCarriageReturn = false;
      if (char !== 0x0a && char !== 0x0d) continue;
      const message = takeLine(pending + text.slice(start, index));
      pending = '';
      if (message !== null) yield message;
      if (char === 0x0d) {
        if (text.charCodeAt(index + 1) === 0x0a) index++;
        else if (index + 1 === text.length) sawCarriageReturn = true;
      }
      start = index + 1;
    }
    pending += text.slice(start);
  }

  for await (const chunk of body) yield* lines(decoder.write(chunk));
  yield* lines(decoder.end());
  if (pending !== '') {
    const message = takeLine(pending);
    pending = '';
    if (message !== null) yield message;
  }
  const last = takeLine('');
  if (last !== null) yield last;
}
