/**
 * The adapter's requests, sent over the real HTTP transport to the strict mock Gemini API: everything the adapter
 * builds must pass Google's validation rules, and what comes back must parse.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../../../src/ir/chat-request.js';
import type { ContentPart } from '../../../../src/ir/message.js';
import { HttpTransport } from '../../../../src/upstreams/http-transport.js';
import { GeminiAdapter } from '../../../../src/upstreams/gemini/gemini-adapter.js';
import type { UpstreamRequest, UpstreamResponse } from '../../../../src/upstreams/upstream-adapter.js';
import { countTokens, startMockGeminiUpstream, type MockGeminiUpstream } from '../../../support/mock-gemini-upstream.js';
import { chatRequest, collect, geminiChannel } from '../../gemini/gemini-test-support.js';

let mock: MockGeminiUpstream;
const transport = new HttpTransport();
const adapter = new GeminiAdapter(transport);
const timeouts = { firstByteMs: 5_000, idleMs: 5_000 };

beforeAll(async () => {
  mock = await startMockGeminiUpstream();
});
afterAll(async () => {
  await mock.close();
  await transport.close();
});

const channel = () => geminiChannel({ baseUrl: mock.url });

async function send(request: UpstreamRequest): Promise<{ response: UpstreamResponse; body: Buffer }> {
  const response = await transport.send(request, { signal: new AbortController().signal, timeouts });
  const chunks: Buffer[] = [];
  for await (const chunk of response.body) chunks.push(chunk);
  return { response, body: Buffer.concat(chunks) };
}

async function chat(request: ChatRequest, model: string) {
  const { response, body } = await send(adapter.buildChatRequest(channel(), 'gemini-upstream-test', request, model));
  expect(response.status, body.toString()).toBe(200);
  return adapter.parseChatResponse(body, request);
}

const weatherTool = {
  name: 'get_weather',
  description: 'Weather of a city',
  parameters: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { location: { type: 'string', minLength: 1 }, unit: { type: ['string', 'null'], enum: ['celsius', 'fahrenheit', null] } },
    required: ['location'],
    additionalProperties: false,
  },
} as const;

describe('GeminiAdapter against the strict mock', () => {
  it('completes a plain request and reads usage', async () => {
    const request = chatRequest({ system: [{ type: 'text', text: 'Be brief.' }], messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello mock' }] }], temperature: 0.3, presencePenalty: 0 });
    const response = await chat(request, 'gemini-2.0-flash');
    expect(response.content).toEqual([{ type: 'text', text: 'Echo: Hello mock' }]);
    expect(response.usage.input.total).toBe(countTokens('Hello mock') + countTokens('Be brief.'));
    expect(response.finishReason).toEqual({ unified: 'stop', raw: 'STOP' });
  });

  it('streams with alt=sse and parses the running usage', async () => {
    const request = chatRequest({ stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: 'one two three four five six seven' }] }], reasoning: { effort: 'low', includeThoughts: true } });
    const upstream = adapter.buildChatRequest(channel(), 'gemini-upstream-test', request, 'gemini-2.5-flash');
    const response = await transport.send(upstream, { signal: new AbortController().signal, timeouts });
    const parts = await collect(adapter.parseChatStream(response.body, request));
    const text = parts.flatMap((part) => (part.type === 'text-delta' ? [part.delta] : [])).join('');
    expect(text).toBe('Echo: one two three four five six seven');
    expect(parts.some((part) => part.type === 'reasoning-delta')).toBe(true);
    const finish = parts.at(-1);
    expect(finish?.type === 'finish' && finish.usage?.output.reasoning).toBeGreaterThan(0);
  });

  it('runs a Gemini 3 tool round trip with the signature kept through the canonical form', async () => {
    const model = 'gemini-3-pro-preview';
    const question: ChatRequest['messages'][number] = { role: 'user', content: [{ type: 'text', text: 'Weather in Tokyo?' }] };
    const first = await chat(chatRequest({ messages: [question], tools: [weatherTool], toolChoice: { kind: 'auto' } }), model);
    const call = first.content[0] as Extract<ContentPart, { type: 'tool-call' }>;
    expect(call).toMatchObject({ type: 'tool-call', name: 'get_weather', argumentsJson: '{"location":"Tokyo","unit":"celsius"}' });
    expect(call.signature).toBeDefined();
    expect(first.finishReason.unified).toBe('tool-calls');
    const history: ChatRequest['messages'] = [
      question,
      { role: 'assistant', content: first.content },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: call.id, toolName: call.name, content: [{ type: 'text', text: '{"temp":18}' }] }] },
    ];
    const second = await chat(chatRequest({ messages: history, tools: [weatherTool] }), model);
    expect(second.content).toEqual([expect.objectContaining({ type: 'text', text: 'Tool results: get_weather={"temp":18}' })]);
    // A history from another provider has no signatures: the placeholder keeps Gemini 3 from rejecting it.
    const foreign: ChatRequest['messages'] = [question, { role: 'assistant', content: [{ ...call, signature: undefined }] }, history[2] as ChatRequest['messages'][number]];
    const third = await chat(chatRequest({ messages: foreign, tools: [weatherTool] }), model);
    expect(third.content[0]).toMatchObject({ type: 'text' });
  });

  it('sends structured output schemas Gemini accepts', async () => {
    const request = chatRequest({
      messages: [{ role: 'user', content: [{ type: 'text', text: 'json please' }] }],
      responseFormat: { kind: 'json-schema', name: 'echo', schema: { type: 'object', properties: { echo: { type: 'string' } }, required: ['echo'], additionalProperties: false } },
    });
    const response = await chat(request, 'gemini-2.5-flash');
    expect(JSON.parse((response.content[0] as { text: string }).text)).toEqual({ echo: 'json please' });
  });

  it('counts tokens with the system instruction and tools', async () => {
    const request = chatRequest({ system: [{ type: 'text', text: 'Be brief.' }], messages: [{ role: 'user', content: [{ type: 'text', text: 'count me' }] }], tools: [weatherTool] });
    const built = adapter.countTokens.build(channel(), 'gemini-upstream-test', request, 'gemini-2.5-flash');
    const { response, body } = await send(built);
    expect(response.status, body.toString()).toBe(200);
    expect(adapter.countTokens.parse(body)).toBeGreaterThan(countTokens('count me') + countTokens('Be brief.'));
  });

  it('embeds one and several inputs', async () => {
    for (const inputs of [['alpha'], ['alpha', 'beta', 'gamma']]) {
      const request = { model: 'emb', inputs, dimensions: 32, taskType: 'SEMANTIC_SIMILARITY', warnings: [] };
      const { response, body } = await send(adapter.embeddings.build(channel(), 'gemini-upstream-test', request, 'gemini-embedding-001'));
      expect(response.status, body.toString()).toBe(200);
      const parsed = adapter.embeddings.parse(body, request);
      expect(parsed.vectors).toHaveLength(inputs.length);
      expect(parsed.vectors[0]).toHaveLength(32);
    }
  });

  it('passes a client body through with the model swapped in URL and batch requests', async () => {
    const chatBody = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'via pass-through' }] }], generationConfig: { responseModalities: ['TEXT'] } });
    const { response, body } = await send(adapter.passThrough.build(channel(), 'gemini-upstream-test', { kind: 'chat', stream: false }, 'gemini-2.0-flash', chatBody));
    expect(response.status, body.toString()).toBe(200);
    const batch = JSON.stringify({ requests: [{ model: 'models/public-embedding', content: { parts: [{ text: 'a' }] } }] });
    const embedded = await send(adapter.passThrough.build(channel(), 'gemini-upstream-test', { kind: 'embeddings', batch: true }, 'gemini-embedding-001', batch));
    expect(embedded.response.status, embedded.body.toString()).toBe(200);
  });
});
