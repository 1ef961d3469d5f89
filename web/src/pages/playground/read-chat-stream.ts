import type { PlaygroundSummary } from '../../api/types';

export type StreamEvent = { kind: 'delta'; text: string } | { kind: 'summary'; summary: PlaygroundSummary } | { kind: 'error'; message: string };

/**
 * Reads the playground's SSE answer: OpenAI chat-completion chunks as unnamed events (`data: {…}`, then
 * `data: [DONE]`), one `event: summary`, and `event: error` if the call fails mid-way.
 */
export async function* readChatStream(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let boundary = buffer.search(/\r?\n\r?\n/);
    while (boundary !== -1) {
      const block = buffer.slice(0, boundary);
      buffer = buffer.slice(boundary + (buffer[boundary] === '\r' ? 4 : 2));
      const event = parseBlock(block);
      if (event !== null) yield event;
      boundary = buffer.search(/\r?\n\r?\n/);
    }
  }
  const last = parseBlock(buffer);
  if (last !== null) yield last;
}

function parseBlock(block: string): StreamEvent | null {
  let name = 'message';
  const data: string[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (line.startsWith('event:')) name = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  const text = data.join('\n');
  if (text === '' || text === '[DONE]') return null;
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    return null;
  }
  if (name === 'summary') return { kind: 'summary', summary: payload as PlaygroundSummary };
  const error = (payload as { error?: { message?: unknown } }).error;
  if (name === 'error' || error !== undefined) return { kind: 'error', message: typeof error?.message === 'string' ? error.message : 'The model call failed.' };
  const choices = (payload as { choices?: { delta?: { content?: unknown } }[] }).choices;
  const delta = choices?.[0]?.delta?.content;
  return typeof delta === 'string' && delta !== '' ? { kind: 'delta', text: delta } : null;
}
