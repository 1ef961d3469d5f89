import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../../../src/ir/chat-request.js';
import type { StreamPart } from '../../../../src/ir/stream-part.js';
import type { Channel, ChannelType } from '../../../../src/domain/records.js';
import { mistralToolCallId } from '../../../../src/upstreams/openai-compatible/mistral-quirks.js';
import { OpenAICompatiblePresetAdapter } from '../../../../src/upstreams/openai-compatible/preset-adapter.js';
import type { UpstreamTransport } from '../../../../src/upstreams/upstream-adapter.js';

/** Each preset's quirk, from the wire bodies it writes and the captured answers it reads. */
const adapter = new OpenAICompatiblePresetAdapter({} as UpstreamTransport);

function channel(type: ChannelType, overrides: Partial<Channel> = {}): Channel {
  return { id: 'ch', name: type, type, baseUrl: null, apiKeys: ['sk-preset'], models: {}, priority: 0, weight: 1, enabled: true, headers: {}, settings: {}, createdAt: 0, updatedAt: 0, ...overrides };
}

function chat(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return { model: 'public', system: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: false, extensions: {}, warnings: [], ...overrides };
}

function fixture(name: string): Buffer {
  return readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url));
}

/** An OpenAI client's body as it arrives on the pass-through path. */
function passThrough(type: ChannelType, body: Record<string, unknown>, upstreamModel = 'model', overrides: Partial<Channel> = {}) {
  const request = adapter.buildPassThrough(channel(type, overrides), overrides.apiKeys?.[0] ?? 'sk-preset', { kind: 'chat', stream: body.stream === true }, upstreamModel, JSON.stringify(body));
  return { ...request, json: JSON.parse(request.body as string) as Record<string, unknown> };
}

async function collect(parts: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const all: StreamPart[] = [];
  for await (const part of parts) all.push(part);
  return all;
}

async function* chunksOf(text: Buffer): AsyncIterable<Buffer> {
  for (let offset = 0; offset < text.length; offset += 97) yield text.subarray(offset, offset + 97);
}

describe('every preset fills its base URL and authentication', () => {
  it.each([
    ['mistral', 'https://api.mistral.ai/v1/chat/completions'],
    ['groq', 'https://api.groq.com/openai/v1/chat/completions'],
    ['deepseek', 'https://api.deepseek.com/v1/chat/completions'],
    ['xai', 'https://api.x.ai/v1/chat/completions'],
    ['openrouter', 'https://openrouter.ai/api/v1/chat/completions'],
    ['together', 'https://api.together.xyz/v1/chat/completions'],
    ['fireworks', 'https://api.fireworks.ai/inference/v1/chat/completions'],
  ] as const)('%s → %s with a Bearer key', (type, url) => {
    const request = adapter.buildChatRequest(channel(type), 'sk-preset', chat(), 'model');
    expect(request.url).toBe(url);
    expect(request.headers.authorization).toBe('Bearer sk-preset');
  });

  it.each([
    ['ollama', 'http://127.0.0.1:11434/v1/chat/completions'],
    ['vllm', 'http://127.0.0.1:8000/v1/chat/completions'],
    ['lmstudio', 'http://127.0.0.1:1234/v1/chat/completions'],
  ] as const)('%s → the local server %s, with no key and no authorization header', (type, url) => {
    const request = adapter.buildChatRequest(channel(type, { apiKeys: [] }), '', chat(), 'llama3.2');
    expect(request.url).toBe(url);
    expect(request.headers).not.toHaveProperty('authorization');
    expect(adapter.buildChatRequest(channel(type, { baseUrl: 'http://gpu-box:9000/v1' }), 'local-key', chat(), 'm').url).toBe('http://gpu-box:9000/v1/chat/completions');
  });
});

describe('mistral', () => {
  const history = {
    model: 'gpt-4o',
    messages: [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_Jg3xOAw3fb8Q2vEZt6yKzWqh', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_Jg3xOAw3fb8Q2vEZt6yKzWqh', content: '18C' },
    ],
    seed: 42,
    max_completion_tokens: 100,
    stream: true,
    stream_options: { include_usage: true },
    user: 'end-user-1',
  };

  it("rewrites other providers' tool call ids to nine letters and digits, the same in the call and its result", () => {
    const { json } = passThrough('mistral', history, 'mistral-large-latest');
    const messages = json.messages as Array<{ tool_calls?: Array<{ id: string }>; tool_call_id?: string }>;
    const id = messages[1]!.tool_calls![0]!.id;
    expect(id).toMatch(/^[A-Za-z0-9]{9}$/);
    expect(messages[2]!.tool_call_id).toBe(id);
    expect(mistralToolCallId('abcDEF123')).toBe('abcDEF123');
  });

  it('names the seed random_seed and the cap max_tokens, and drops fields Mistral rejects', () => {
    const { json } = passThrough('mistral', history, 'mistral-large-latest');
    expect(json).toMatchObject({ random_seed: 42, max_tokens: 100, stream: true });
    for (const field of ['seed', 'max_completion_tokens', 'stream_options', 'user']) expect(json).not.toHaveProperty(field);
  });

  it('reports what it changed on the translated path', () => {
    const request = chat({ seed: 7, user: 'u', messages: [
      { role: 'user', content: [{ type: 'text', text: 'weather?' }] },
      { role: 'assistant', content: [{ type: 'tool-call', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', argumentsJson: '{}' }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'toolu_01A09q90qw90lq917835lq9', toolName: 'get_weather', content: [{ type: 'text', text: '18C' }] }] },
    ] });
    const body = JSON.parse(adapter.buildChatRequest(channel('mistral'), 'k', request, 'mistral-small-latest').body as string) as Record<string, unknown>;
    expect(body.random_seed).toBe(7);
    expect(request.warnings).toEqual(expect.arrayContaining(["'user' was dropped: Mistral does not take it.", "Tool call ids were shortened to Mistral's nine-character form."]));
  });
});

describe('groq', () => {
  it('drops the OpenAI fields Groq rejects, and message names', () => {
    const { json } = passThrough('groq', { model: 'x', messages: [{ role: 'user', name: 'ann', content: 'hi' }], logprobs: true, top_logprobs: 2, logit_bias: { 50256: -100 }, n: 2, temperature: 0.3 });
    expect(json).toEqual({ model: 'x', messages: [{ role: 'user', content: 'hi' }], temperature: 0.3 });
  });

  it('reads the stream usage Groq puts in x_groq', async () => {
    const parts = await collect(adapter.parseChatStream(chunksOf(fixture('groq-x-groq-usage.chunks.txt')), chat({ stream: true })));
    const finish = parts.at(-1);
    expect(finish).toMatchObject({ type: 'finish', usage: { input: { total: 12 }, output: { total: 3 } } });
    expect(parts.filter((part) => part.type === 'text-delta').map((part) => (part as { delta: string }).delta).join('')).toBe('Hello there');
  });
});

describe('deepseek', () => {
  it('reads reasoning_content as reasoning, before the answer', () => {
    const response = adapter.parseChatResponse(fixture('deepseek-reasoner.response.json'), chat());
    expect(response.content).toEqual([
      { type: 'reasoning', text: 'Compare the tenths: 1 is less than 8, so 9.11 < 9.8.' },
      { type: 'text', text: '9.11 is smaller than 9.8.' },
    ]);
    expect(response.usage.output).toEqual({ total: 96, text: 16, reasoning: 80 });
  });

  it('streams reasoning_content as a reasoning block, and counts prompt_cache_hit_tokens as cache reads', async () => {
    const parts = await collect(adapter.parseChatStream(chunksOf(fixture('deepseek-reasoner.chunks.txt')), chat({ stream: true })));
    expect(parts.map((part) => part.type)).toEqual([
      'response-start', 'reasoning-start', 'reasoning-delta', 'reasoning-delta', 'reasoning-end', 'text-start', 'text-delta', 'text-delta', 'text-end', 'usage', 'finish',
    ]);
    expect(parts.at(-1)).toMatchObject({ usage: { input: { total: 18, cacheRead: 12, noCache: 6 } } });
  });

  it('does not send earlier reasoning back (DeepSeek answers 400 to reasoning_content in the input)', () => {
    const { json } = passThrough('deepseek', { model: 'x', messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b', reasoning_content: 'thinking' }, { role: 'user', content: 'c' }] });
    expect((json.messages as Array<Record<string, unknown>>)[1]).toEqual({ role: 'assistant', content: 'b' });
  });
});

describe('xai', () => {
  const body = { model: 'x', messages: [{ role: 'user', content: 'hi' }], presence_penalty: 0.5, frequency_penalty: 0.5, stop: ['END'], reasoning_effort: 'high' };

  it('drops penalties, stop and the effort for grok-4, which rejects them', () => {
    expect(passThrough('xai', body, 'grok-4-0709').json).toEqual({ model: 'x', messages: [{ role: 'user', content: 'hi' }] });
  });

  it('keeps the effort for grok-3-mini, and everything for non-reasoning models', () => {
    expect(passThrough('xai', body, 'grok-3-mini').json).toEqual({ model: 'x', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'high' });
    expect(passThrough('xai', body, 'grok-2-1212').json).toEqual(body);
  });
});

describe('openrouter', () => {
  it('sends the app attribution headers from the settings', () => {
    const request = adapter.buildChatRequest(channel('openrouter', { settings: { site_url: 'https://example.com', app_name: 'Unigate' } }), 'sk-or-v1-x', chat(), 'anthropic/claude-sonnet-4.5');
    expect(request.headers).toMatchObject({ 'HTTP-Referer': 'https://example.com', 'X-Title': 'Unigate', authorization: 'Bearer sk-or-v1-x' });
  });

  it('reads OpenRouter’s `reasoning` field as reasoning', () => {
    const response = adapter.parseChatResponse(Buffer.from(JSON.stringify({ id: 'gen-1', model: 'deepseek/deepseek-r1', created: 1, choices: [{ index: 0, message: { role: 'assistant', content: 'ok', reasoning: 'hmm' }, finish_reason: 'stop' }] })), chat());
    expect(response.content[0]).toEqual({ type: 'reasoning', text: 'hmm' });
  });
});

describe('lmstudio', () => {
  it("sends JSON mode as a schema of any object (LM Studio takes no 'json_object')", () => {
    const { json } = passThrough('lmstudio', { model: 'x', messages: [{ role: 'user', content: 'json please' }], response_format: { type: 'json_object' } });
    expect(json.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'response', schema: { type: 'object' } } });
  });
});

describe('presets without body quirks', () => {
  it.each(['together', 'fireworks', 'ollama', 'vllm'] as const)('%s forwards the body as the client sent it', (type) => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }], seed: 1, logprobs: true, stream_options: { include_usage: true }, stream: true };
    expect(passThrough(type, body).json).toEqual(body);
  });
});
