/**
 * The adapter against the strict mock Anthropic upstream over real HTTP: every body it builds from canonical
 * requests (OpenAI-shaped conversations included) must be accepted, and every answer parsed back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../../../src/ir/chat-request.js';
import type { ContentPart, Message } from '../../../../src/ir/message.js';
import type { StreamPart } from '../../../../src/ir/stream-part.js';
import { AnthropicAdapter } from '../../../../src/upstreams/anthropic/anthropic-adapter.js';
import { HttpTransport } from '../../../../src/upstreams/http-transport.js';
import type { UpstreamRequest } from '../../../../src/upstreams/upstream-adapter.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../../support/mock-anthropic-upstream.js';
import { channel, chatRequest, collect, joinDeltas } from '../../anthropic/helpers.js';

const KEY = 'sk-ant-upstream-test';
const MODEL = 'claude-haiku-4-5-20251001';
const weather = { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } };

let mock: MockAnthropicUpstream;
let http: HttpTransport;
let adapter: AnthropicAdapter;

beforeAll(async () => {
  mock = await startMockAnthropicUpstream({ apiKey: KEY });
  http = new HttpTransport();
  adapter = new AnthropicAdapter(http);
});
afterAll(async () => {
  await http.close();
  await mock.close();
});

async function send(upstream: UpstreamRequest): Promise<{ status: number; body: Buffer }> {
  const response = await http.send(upstream, { signal: new AbortController().signal, timeouts: { firstByteMs: 5000, idleMs: 5000 } });
  const chunks: Buffer[] = [];
  for await (const chunk of response.body) chunks.push(chunk);
  return { status: response.status, body: Buffer.concat(chunks) };
}

async function complete(request: ChatRequest) {
  const { status, body } = await send(adapter.buildChatRequest(channel({ baseUrl: `${mock.url}/v1` }), KEY, request, MODEL));
  expect(status, body.toString()).toBe(200);
  return adapter.parseChatResponse(body, request);
}

async function stream(request: ChatRequest): Promise<StreamPart[]> {
  const streaming = { ...request, stream: true };
  const response = await http.send(adapter.buildChatRequest(channel({ baseUrl: mock.url }), KEY, streaming, MODEL), { signal: new AbortController().signal, timeouts: { firstByteMs: 5000, idleMs: 5000 } });
  expect(response.status).toBe(200);
  return joinDeltas(await collect(adapter.parseChatStream(response.body, streaming)));
}

describe('the adapter against the strict mock', () => {
  it('sends an OpenAI-shaped conversation the mock accepts: assistant first, repeated roles, sampling out of range', async () => {
    const request = chatRequest({
      system: [{ type: 'text', text: 'Be terse.' }],
      messages: [
        { role: 'assistant', content: [{ type: 'text', text: 'Hi! Ask me anything.' }] },
        { role: 'user', content: [{ type: 'text', text: 'First part.' }] },
        { role: 'user', content: [{ type: 'text', text: '' }, { type: 'text', text: 'Second part.' }] },
      ],
      temperature: 1.8,
      seed: 3,
      frequencyPenalty: 1,
      stopSequences: [' '],
      responseFormat: { kind: 'json' },
    });
    const response = await complete(request);
    expect(response.content).toEqual([{ type: 'text', text: 'Echo: First part. Second part.' }]);
    expect(response.finishReason).toEqual({ unified: 'stop', raw: 'end_turn' });
    expect(response.usage.input.total).toBeGreaterThan(0);
    expect(mock.requests.at(-1)?.headers['anthropic-version']).toBe('2023-06-01');
    expect(mock.requests.at(-1)?.headers['x-api-key']).toBe(KEY);
  });

  it('runs a tool loop with parallel calls and tool messages', async () => {
    const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'weather in Paris and Rome?' }] }];
    const first = await complete(chatRequest({ messages, tools: [weather] }));
    const calls = first.content.filter((part) => part.type === 'tool-call');
    expect(calls).toHaveLength(2);
    messages.push({ role: 'assistant', content: first.content });
    for (const call of calls) messages.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: call.id, toolName: call.name, content: [{ type: 'text', text: `sunny (${call.argumentsJson})` }] }] });
    const second = await complete(chatRequest({ messages, tools: [weather] }));
    expect(second.content).toEqual([{ type: 'text', text: 'Tool get_weather returned: sunny ({"location":"Paris"})\nTool get_weather returned: sunny ({"location":"Rome"})' }]);
  });

  it('sends signed thinking back in a tool loop (streamed first turn), which the mock verifies', async () => {
    const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'weather in Lima?' }] }];
    const parts = await stream(chatRequest({ messages, tools: [weather], reasoning: { effort: 'low' } }));
    const reasoningEnd = parts.find((part) => part.type === 'reasoning-end');
    expect(reasoningEnd).toMatchObject({ signature: expect.stringMatching(/^Eo/) as string });
    const reasoning = parts.find((part) => part.type === 'reasoning-delta');
    const toolStart = parts.find((part) => part.type === 'tool-input-start');
    const toolInput = parts.find((part) => part.type === 'tool-input-delta');
    if (reasoning?.type !== 'reasoning-delta' || toolStart?.type !== 'tool-input-start' || toolInput?.type !== 'tool-input-delta' || reasoningEnd?.type !== 'reasoning-end') throw new Error('unexpected parts');
    const assistant: ContentPart[] = [
      { type: 'reasoning', text: reasoning.delta, ...(reasoningEnd.signature === undefined ? {} : { signature: reasoningEnd.signature }) },
      { type: 'tool-call', id: toolStart.toolCallId, name: toolStart.toolName, argumentsJson: toolInput.delta },
    ];
    messages.push({ role: 'assistant', content: assistant });
    messages.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: toolStart.toolCallId, toolName: toolStart.toolName, content: [{ type: 'text', text: 'foggy' }] }] });
    const second = await complete(chatRequest({ messages, tools: [weather], reasoning: { effort: 'low' } }));
    expect(second.content.at(-1)).toEqual({ type: 'text', text: 'Tool get_weather returned: foggy' });
    expect(second.content[0]).toMatchObject({ type: 'reasoning', signature: expect.any(String) as string });
    expect(second.usage.output.reasoning).toBeGreaterThan(0);
  });

  it('drops thinking for a tool loop whose calls came unsigned from another provider, so the mock accepts it', async () => {
    const messages: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'weather in Oslo?' }] },
      { role: 'assistant', content: [{ type: 'reasoning', text: 'from o3' }, { type: 'tool-call', id: 'call_abc', name: 'get_weather', argumentsJson: '{"location":"Oslo"}' }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_abc', toolName: 'get_weather', content: [{ type: 'text', text: 'snow' }] }] },
    ];
    const request = chatRequest({ messages, tools: [weather], reasoning: { effort: 'high' } });
    expect((await complete(request)).content).toEqual([{ type: 'text', text: 'Tool get_weather returned: snow' }]);
    expect(request.warnings.join(' ')).toContain('Thinking was not enabled');
  });

  it('streams text with usage and counts tokens like the answer does', async () => {
    const request = chatRequest({ messages: [{ role: 'user', content: [{ type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } }, { type: 'text', text: 'describe' }] }] });
    const parts = await stream(request);
    expect(parts.map((part) => part.type)).toEqual(['response-start', 'usage', 'text-start', 'text-delta', 'text-end', 'usage', 'finish']);
    const finish = parts.at(-1);
    const { status, body } = await send(adapter.countTokens.build(channel({ baseUrl: mock.url }), KEY, request, MODEL));
    expect(status).toBe(200);
    expect(finish?.type === 'finish' ? finish.usage?.input.total : -1).toBe(adapter.countTokens.parse(body));
  });
});
