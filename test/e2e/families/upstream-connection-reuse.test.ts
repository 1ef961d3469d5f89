import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';

/** A fixed, valid Anthropic stream, so the test counts connections and nothing else. */
const ANTHROPIC_STREAM = [
  ['message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } }],
  ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' there' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
  ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } }],
  ['message_stop', { type: 'message_stop' }],
].map(([event, data]) => `event: ${event as string}\ndata: ${JSON.stringify(data)}\n\n`).join('');

describe('upstream connections are kept alive on the translated stream path', () => {
  let upstream: Server;
  let connections = 0;
  /**
   * The upstream ends its body this long after the last event: the caller must have its answer before. Long enough
   * that a loaded machine's slow request through the gateway (3.5 s seen at load 27) still comes in under it.
   */
  const BODY_END_DELAY_MS = 6000;
  /** Bodies the upstream has ended. */
  let bodiesEnded = 0;
  let gateway: TestGateway;
  let account: SeededAccount;

  beforeAll(async () => {
    upstream = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        // Every event first; the end of the chunked body follows later, as over a real network. A parser
        // done at message_stop stops reading before that end arrives.
        response.write(ANTHROPIC_STREAM);
        setTimeout(() => response.end(() => (bodiesEnded += 1)), BODY_END_DELAY_MS);
      });
    });
    upstream.on('connection', () => {
      connections += 1;
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    gateway = await startTestGateway();
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    await addRoutedModel(gateway, { model: 'claude-via-openai', channel: { name: 'a', type: 'anthropic', base_url: url, api_key: 'sk-ant-x', models: { 'claude-via-openai': 'claude-sonnet-4-5' } } });
    account = await seedAccount(gateway);
  });

  afterAll(async () => {
    await gateway?.close();
    upstream?.closeAllConnections();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  });

  it('reuses one connection for streams whose parser stops at message_stop, without making the caller wait', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: account.key, maxRetries: 0 });
    for (let index = 0; index < 5; index += 1) {
      const started = performance.now();
      const final = await client.chat.completions.stream({ model: 'claude-via-openai', messages: [{ role: 'user', content: 'hi' }] }).finalChatCompletion();
      expect(final.choices[0]?.message.content).toBe('Hello there');
      // The answer is whole while the upstream has not yet ended this body.
      expect(bodiesEnded, `answered after ${(performance.now() - started).toFixed(0)} ms`).toBe(index);
      // The connection is busy until the upstream's body ends (BODY_END_DELAY_MS after the last event here), and
      // free for the next request once the gateway has read that end.
      while (bodiesEnded <= index) await new Promise((resolve) => setTimeout(resolve, 20));
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(connections).toBe(1);
  }, 120_000);
});
