/**
 * An OpenAI upstream that streams a very long answer: `stream N MB` in the request asks for N MiB of answer text,
 * sent as many small text deltas (chat completions chunks on `/chat/completions`, Responses events on `/responses`),
 * written as fast as the gateway reads them, then the closing usage. For measuring the gateway's cost per chunk.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const LARGE_STREAM_DELTA = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor ';

export interface LargeStreamUpstream {
  /** Base URL of the OpenAI API (…/v1). */
  url: string;
  close(): Promise<void>;
}

/** Tokens the upstream reports for `characters` of answer: one per four characters, as its closing usage. */
export function reportedOutputTokens(characters: number): number {
  return Math.round(characters / 4);
}

function writeAll(response: ServerResponse, events: Iterator<string>): Promise<void> {
  return new Promise((resolve) => {
    const pump = (): void => {
      for (let next = events.next(); !next.done; next = events.next()) {
        if (!response.write(next.value)) return void response.once('drain', pump);
      }
      resolve();
    };
    pump();
  });
}

function* chatEvents(characters: number): Generator<string> {
  const head = '{"id":"chatcmpl-big","object":"chat.completion.chunk","created":1,"model":"big"';
  yield `data: ${head},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n`;
  const delta = `data: ${head},"choices":[{"index":0,"delta":{"content":${JSON.stringify(LARGE_STREAM_DELTA)}},"finish_reason":null}]}\n\n`;
  for (let sent = 0; sent < characters; sent += LARGE_STREAM_DELTA.length) yield delta;
  yield `data: ${head},"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n`;
  const output = reportedOutputTokens(characters);
  yield `data: ${head},"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":${output},"total_tokens":${output + 7}}}\n\ndata: [DONE]\n\n`;
}

function* responsesEvents(characters: number): Generator<string> {
  let sequence = 0;
  const event = (type: string, body: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...body })}\n\n`;
  const response = { id: 'resp_big', object: 'response', created_at: 1, model: 'big', status: 'in_progress', output: [] as unknown[] };
  yield event('response.created', { response });
  yield event('response.in_progress', { response });
  yield event('response.output_item.added', { output_index: 0, item: { id: 'msg_big', type: 'message', status: 'in_progress', role: 'assistant', content: [] } });
  yield event('response.content_part.added', { item_id: 'msg_big', output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
  for (let sent = 0; sent < characters; sent += LARGE_STREAM_DELTA.length) {
    yield event('response.output_text.delta', { item_id: 'msg_big', output_index: 0, content_index: 0, delta: LARGE_STREAM_DELTA, logprobs: [] });
  }
  const output = reportedOutputTokens(characters);
  const item = { id: 'msg_big', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: '(long)', annotations: [] }] };
  yield event('response.output_item.done', { output_index: 0, item });
  yield event('response.completed', {
    response: { ...response, status: 'completed', output: [item], usage: { input_tokens: 7, input_tokens_details: { cached_tokens: 0 }, output_tokens: output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: output + 7 } },
  });
}

export async function startLargeStreamUpstream(): Promise<LargeStreamUpstream> {
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      const megabytes = Number(/stream ([0-9.]+) MB/.exec(body)?.[1] ?? '0.01');
      const characters = Math.round(megabytes * 1024 * 1024);
      const path = request.url ?? '';
      const events = path.endsWith('/responses') ? responsesEvents(characters) : path.endsWith('/chat/completions') ? chatEvents(characters) : null;
      if (events === null) {
        response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found","type":"invalid_request_error"}}');
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      void writeAll(response, events).then(() => response.end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
