/**
 * Which wire a Vertex AI answer is in. A Vertex channel serves Gemini (generateContent) and Claude (Anthropic
 * Messages) models, and the parsers learn only the caller's request, not the upstream model; the two answers tell
 * themselves apart: only an Anthropic message has a top-level `"type": "message"` (inside a string the quotes would be
 * escaped), and only an Anthropic stream opens with an `event:` line or a `message_start` event.
 */
const ANTHROPIC_MESSAGE = /"type"\s*:\s*"message"/;
const ANTHROPIC_STREAM = /^\s*event:|"type"\s*:\s*"message_start"/;

export function isAnthropicAnswer(body: Buffer): boolean {
  return ANTHROPIC_MESSAGE.test(body.toString('utf8'));
}

export function isAnthropicStream(head: string): boolean {
  return ANTHROPIC_STREAM.test(head);
}

/** The stream's first chunk, and a stream that replays it before the rest (closing the rest when stopped early). */
export async function peekStream(body: AsyncIterable<Buffer>): Promise<{ head: string; stream: AsyncIterable<Buffer> }> {
  const iterator = body[Symbol.asyncIterator]();
  const first = await iterator.next();
  const head = first.done === true ? '' : first.value.toString('utf8', 0, Math.min(first.value.length, 512));
  async function* replay(): AsyncIterable<Buffer> {
    let finished = false;
    try {
      if (first.done !== true) {
        yield first.value;
        for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) yield next.value;
      }
      finished = true;
    } finally {
      if (!finished) await iterator.return?.();
    }
  }
  return { head, stream: replay() };
}
