/**
 * The adapter's bodies against the strict mock of api.openai.com (it rejects what OpenAI rejects: unknown
 * parameters, max_tokens or non-default temperature on reasoning models, unanswered tool calls, JSON mode without
 * "json" in the prompt), over real HTTP through the gateway's own transport.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../../../src/ir/chat-request.js';
import type { StreamPart } from '../../../../src/ir/stream-part.js';
import { HttpTransport } from '../../../../src/upstreams/http-transport.js';
import { OpenAIAdapter } from '../../../../src/upstreams/openai/openai-adapter.js';
import type { UpstreamResponse } from '../../../../src/upstreams/upstream-adapter.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../../support/mock-openai-upstream.js';
import { channel, chatRequest, collect } from '../../openai/openai-test-helpers.js';

let mock: MockOpenAIUpstream;
const transport = new HttpTransport({ connectionsPerOrigin: 4 });
const adapter = new OpenAIAdapter(transport);

beforeAll(async () => {
  mock = await startMockOpenAIUpstream({ apiKey: 'sk-upstream-test' });
});

afterAll(async () => {
  await transport.close();
  await mock.close();
});

async function call(request: ChatRequest, model: string): Promise<UpstreamResponse> {
  const upstreamChannel = channel('openai', { baseUrl: mock.url });
  const upstream = adapter.buildChatRequest(upstreamChannel, 'sk-upstream-test', request, model);
  return transport.send(upstream, { signal: new AbortController().signal, timeouts: { firstByteMs: 5000, idleMs: 5000 } });
}

async function bodyText(response: UpstreamResponse): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of response.body) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

const weatherTool = {
  name: 'get_weather',
  description: 'Current weather of a city',
  parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'], additionalProperties: false },
};

describe('OpenAIAdapter against the mock OpenAI upstream', () => {
  it('sends an Anthropic-shaped tool conversation that OpenAI accepts, and reads the answer', async () => {
    const request = chatRequest({
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
        { role: 'assistant', content: [{ type: 'reasoning', text: 'Use the tool.', signature: 's' }, { type: 'tool-call', id: 'toolu_1', name: 'get_weather', argumentsJson: '{"location":"Paris"}' }] },
        { role: 'user', content: [{ type: 'tool-result', toolCallId: 'toolu_1', toolName: 'get_weather', content: [{ type: 'text', text: '18°C' }] }] },
      ],
      tools: [weatherTool],
      maxOutputTokens: 50,
      temperature: 0.3,
    });
    const response = await call(request, 'gpt-4o-mini');
    const text = await bodyText(response);
    expect(response.status, text).toBe(200);
    const parsed = adapter.parseChatResponse(Buffer.from(text), request);
    expect(parsed.content).toEqual([{ type: 'text', text: 'Tool get_weather returned: 18°C' }]);
    expect(parsed.finishReason).toEqual({ unified: 'stop', raw: 'stop' });
    expect(parsed.usage.input.total).toBeGreaterThan(0);
  });

  it('streams a tool call into canonical tool-input parts with usage', async () => {
    const request = chatRequest({ stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: "What's the weather in Oslo?" }] }], tools: [weatherTool] });
    const response = await call(request, 'gpt-4o');
    expect(response.status).toBe(200);
    const parts: StreamPart[] = await collect(adapter.parseChatStream(response.body, request));
    const start = parts.find((part) => part.type === 'tool-input-start');
    expect(start).toMatchObject({ toolName: 'get_weather', index: 0 });
    const args = parts.map((part) => (part.type === 'tool-input-delta' ? part.delta : '')).join('');
    expect(JSON.parse(args)).toHaveProperty('location');
    const finish = parts.at(-1);
    expect(finish).toMatchObject({ type: 'finish', reason: { unified: 'tool-calls', raw: 'tool_calls' } });
    expect(finish?.type === 'finish' ? finish.usage?.output.total : 0).toBeGreaterThan(0);
  });

  it('follows reasoning-model rules so o-series models accept the request', async () => {
    const request = chatRequest({ maxOutputTokens: 400, temperature: 0.2, stopSequences: ['END'], reasoning: { budgetTokens: 8000 } });
    const response = await call(request, 'o4-mini');
    const text = await bodyText(response);
    expect(response.status, text).toBe(200);
    expect(mock.requests.at(-1)?.body).toMatchObject({ max_completion_tokens: 400, reasoning_effort: 'medium' });
    expect(adapter.parseChatResponse(Buffer.from(text), request).usage.output.reasoning).toBeGreaterThanOrEqual(0);
  });

  it('makes JSON mode acceptable when the prompt never mentions JSON', async () => {
    const request = chatRequest({ responseFormat: { kind: 'json' } });
    const response = await call(request, 'gpt-4o-mini');
    const text = await bodyText(response);
    expect(response.status, text).toBe(200);
    const parsed = adapter.parseChatResponse(Buffer.from(text), request);
    const answer = parsed.content[0]?.type === 'text' ? parsed.content[0].text : '';
    expect(() => JSON.parse(answer) as unknown).not.toThrow();
  });

  it('reads a mid-stream upstream failure as an error part', async () => {
    mock.setFault({ kind: 'stream-error', afterChunks: 3, times: 1 });
    const request = chatRequest({ stream: true });
    const response = await call(request, 'gpt-4o-mini');
    const parts = await collect(adapter.parseChatStream(response.body, request));
    expect(parts.at(-1)).toMatchObject({ type: 'error', status: 502, code: 'upstream_error' });
  });
});
