import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../../src/errors/gateway-error.js';
import type { ChatRequest } from '../../../../src/ir/chat-request.js';
import { AnthropicAdapter } from '../../../../src/upstreams/anthropic/anthropic-adapter.js';
import { anthropicWire } from '../../../../src/wire/anthropic/wire.js';
import type { UpstreamAdapter, UpstreamTransport } from '../../../../src/upstreams/upstream-adapter.js';
import { channel, chatRequest } from '../../anthropic/helpers.js';

const transport: UpstreamTransport = { send: () => Promise.reject(new Error('not used')) };
const adapter = new AnthropicAdapter(transport);

function body(request: ChatRequest, settings: Record<string, unknown> = {}): Record<string, unknown> {
  return JSON.parse(String(adapter.buildChatRequest(channel({ settings }), 'sk-ant-key', request, 'claude-upstream').body ?? 'null')) as Record<string, unknown>;
}

describe('buildChatRequest: URL and headers', () => {
  it('posts to /v1/messages with x-api-key and the default anthropic-version', () => {
    const request = adapter.buildChatRequest(channel(), 'sk-ant-key', chatRequest(), 'claude-upstream');
    expect(request).toMatchObject({ url: 'https://api.anthropic.com/v1/messages', method: 'POST' });
    expect(request.headers).toEqual({ 'content-type': 'application/json', 'x-api-key': 'sk-ant-key', 'anthropic-version': '2023-06-01' });
  });

  it.each(['https://proxy.example/anthropic', 'https://proxy.example/anthropic/', 'https://proxy.example/anthropic/v1', 'https://proxy.example/anthropic/v1/'])('accepts base URL %s', (baseUrl) => {
    expect(adapter.buildChatRequest(channel({ baseUrl }), 'k', chatRequest(), 'm').url).toBe('https://proxy.example/anthropic/v1/messages');
  });

  it("keeps the channel's own version and beta headers, lowercased so pass-through headers replace them", () => {
    const request = adapter.passThrough.build(channel({ headers: { 'Anthropic-Version': '2024-01-01', 'anthropic-beta': 'x' } }), 'k', { kind: 'chat', stream: true }, 'm', '{}');
    expect(request.headers).toMatchObject({ 'anthropic-version': '2024-01-01', 'anthropic-beta': 'x' });
    Object.assign(request.headers, { 'anthropic-version': '2023-06-01' });
    expect(request.headers['anthropic-version']).toBe('2023-06-01');
    expect(adapter.passThrough.build(channel({ settings: { anthropic_version: '2025-01-01' } }), 'k', { kind: 'chat', stream: false }, 'm', '{}').headers['anthropic-version']).toBe('2025-01-01');
  });

  it('routes pass-through count_tokens, refuses embeddings', () => {
    expect(adapter.passThrough.build(channel(), 'k', { kind: 'count-tokens' }, 'm', '{"a":1}')).toMatchObject({ url: 'https://api.anthropic.com/v1/messages/count_tokens', body: '{"a":1}' });
    // The Messages wire has no embeddings endpoint, so no embeddings body is ever passed through to Anthropic.
    expect(anthropicWire.passThrough.embeddings).toBeNull();
    expect(() => adapter.passThrough.build(channel(), 'k', { kind: 'embeddings', batch: false }, 'm', '{}')).toThrow(/no embeddings endpoint/);
    // No embeddings part: the embeddings relay skips Anthropic channels.
    expect((adapter as UpstreamAdapter).embeddings).toBeUndefined();
  });
});

describe('buildChatRequest: messages', () => {
  it('merges turns, turns tool messages into user tool_result turns (results first), keeps signed thinking', () => {
    const request = chatRequest({
      system: [{ type: 'text', text: 'Sys', cacheControl: { type: 'ephemeral' } }, { type: 'text', text: '' }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'weather?' }] },
        { role: 'user', content: [{ type: 'image', source: { kind: 'url', url: 'data:image/png;base64,AAAA' } }] },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'think', signature: 'sig' },
            { type: 'reasoning', text: 'unsigned from another provider' },
            { type: 'tool-call', id: 'call_1', name: 'get_weather', argumentsJson: '{"city":"Paris"}' },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool-call', id: 'call_2', name: 'get_time', argumentsJson: 'not json' }] },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'get_weather', content: [{ type: 'text', text: 'sunny' }] }] },
        { role: 'user', content: [{ type: 'text', text: 'thanks' }] },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_2', toolName: 'get_time', content: [], isError: true }] },
      ],
    });
    const wire = body(request);
    expect(wire.system).toEqual([{ type: 'text', text: 'Sys', cache_control: { type: 'ephemeral' } }]);
    expect(wire.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'weather?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'think', signature: 'sig' },
          { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'call_2', name: 'get_time', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: 'sunny' }] },
          { type: 'tool_result', tool_use_id: 'call_2', is_error: true },
          { type: 'text', text: 'thanks' },
        ],
      },
    ]);
    expect(request.warnings).toEqual([
      'Reasoning without an Anthropic signature cannot be sent back to Anthropic and was dropped.',
      'Tool call arguments that were not a JSON object were sent to Anthropic as {}.',
    ]);
  });

  it('opens with a placeholder user turn, trims a prefill, maps files to documents', () => {
    const request = chatRequest({
      messages: [
        { role: 'assistant', content: [{ type: 'text', text: 'Hello, how can I help?' }] },
        {
          role: 'user',
          content: [
            { type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0=' }, filename: 'a.pdf' },
            { type: 'file', source: { kind: 'base64', mediaType: 'text/plain', data: Buffer.from('notes').toString('base64') } },
            { type: 'file', source: { kind: 'url', url: 'https://x/doc.pdf' } },
            { type: 'file', source: { kind: 'base64', mediaType: 'audio/wav', data: 'UklG' } },
            { type: 'text', text: '' },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'The answer is ' }] },
      ],
    });
    expect(body(request).messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: '.' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Hello, how can I help?' }] },
      {
        role: 'user',
        content: [
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: 'a.pdf' },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'notes' } },
          { type: 'document', source: { type: 'url', url: 'https://x/doc.pdf' } },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'The answer is' }] },
    ]);
    expect(request.warnings).toHaveLength(3);
  });
});

describe('buildChatRequest: parameters', () => {
  it('maps sampling, stops, tools, tool choice, user and stream; drops what Anthropic lacks with warnings', () => {
    const request = chatRequest({
      stream: true,
      maxOutputTokens: 300,
      temperature: 1.6,
      topP: 0.5,
      topK: 40,
      stopSequences: ['END', '  '],
      seed: 7,
      presencePenalty: 0.5,
      frequencyPenalty: 0.5,
      user: 'u-1',
      tools: [{ name: 'lookup', description: 'Look up', parameters: { properties: { q: { type: 'string' } } }, strict: true }],
      toolChoice: { kind: 'required' },
      parallelToolCalls: false,
    });
    expect(body(request)).toEqual({
      model: 'claude-upstream',
      max_tokens: 300,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      temperature: 1,
      top_p: 0.5,
      top_k: 40,
      stop_sequences: ['END'],
      stream: true,
      tools: [{ name: 'lookup', description: 'Look up', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      metadata: { user_id: 'u-1' },
    });
    expect(request.warnings).toHaveLength(6);
    body(request);
    expect(request.warnings).toHaveLength(6);
  });

  it.each([
    [{ kind: 'auto' }, undefined, { type: 'auto' }],
    [{ kind: 'none' }, false, { type: 'none' }],
    [{ kind: 'tool', name: 'lookup' }, undefined, { type: 'tool', name: 'lookup' }],
    [undefined, false, { type: 'auto', disable_parallel_tool_use: true }],
    [undefined, true, undefined],
  ] as const)('tool choice %o with parallel %o → %o', (toolChoice, parallelToolCalls, expected) => {
    const request = chatRequest({ tools: [{ name: 'lookup', parameters: { type: 'object' } }], ...(toolChoice ? { toolChoice } : {}), ...(parallelToolCalls === undefined ? {} : { parallelToolCalls }) });
    expect(body(request).tool_choice).toEqual(expected);
  });

  it('defaults max_tokens to 4096, or to the channel setting', () => {
    expect(body(chatRequest()).max_tokens).toBe(4096);
    expect(body(chatRequest(), { default_max_tokens: 1000 }).max_tokens).toBe(1000);
  });

  it.each([
    [{ effort: 'minimal' }, undefined, { budget: 1024, max: 1024 + 4096 }],
    [{ effort: 'high' }, undefined, { budget: 16384, max: 16384 + 4096 }],
    [{ effort: 'medium' }, 3000, { budget: 2999, max: 3000 }],
    [{ budgetTokens: 500 }, 8000, { budget: 1024, max: 8000 }],
    [{ budgetTokens: -1 }, 20000, { budget: 8192, max: 20000 }],
    [{ includeThoughts: true }, 20000, { budget: 8192, max: 20000 }],
    [{ budgetTokens: 0 }, 20000, null],
    [{ includeThoughts: false }, 20000, null],
    [{ effort: 'low' }, 1000, null],
  ] as const)('reasoning %o with max %o → thinking %o', (reasoning, maxOutputTokens, expected) => {
    const wire = body(chatRequest({ reasoning, ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }) }));
    if (expected === null) expect(wire.thinking).toBeUndefined();
    else {
      expect(wire.thinking).toEqual({ type: 'enabled', budget_tokens: expected.budget });
      expect(wire.max_tokens).toBe(expected.max);
    }
  });

  it('follows the thinking rules: no temperature/top_k, top_p >= 0.95, no forced tools, signed tool loops', () => {
    const thinking = body(chatRequest({ reasoning: { effort: 'low' }, temperature: 0.3, topK: 5, topP: 0.5 }));
    expect(thinking).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2048 }, top_p: 0.95 });
    expect(thinking.temperature).toBeUndefined();
    expect(thinking.top_k).toBeUndefined();
    const forced = body(chatRequest({ reasoning: { effort: 'low' }, tools: [{ name: 't', parameters: { type: 'object' } }], toolChoice: { kind: 'required' } }));
    expect(forced.thinking).toBeUndefined();
    const unsignedLoop = body(
      chatRequest({
        reasoning: { effort: 'low' },
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'go' }] },
          { role: 'assistant', content: [{ type: 'tool-call', id: 'c', name: 't', argumentsJson: '{}' }] },
          { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c', toolName: 't', content: [{ type: 'text', text: 'ok' }] }] },
        ],
      }),
    );
    expect(unsignedLoop.thinking).toBeUndefined();
  });

  it('emulates JSON output with a system instruction, or uses structured outputs when the channel has them', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } } };
    const request = chatRequest({ system: [{ type: 'text', text: 'Be brief.' }], responseFormat: { kind: 'json-schema', name: 'answer', schema }, tools: [{ name: 't', parameters: { type: 'object' }, strict: true }] });
    const emulated = body(request);
    expect(emulated.system).toEqual([{ type: 'text', text: 'Be brief.' }, { type: 'text', text: expect.stringContaining(JSON.stringify(schema)) as string }]);
    expect(emulated.output_config).toBeUndefined();
    const native = body(chatRequest({ responseFormat: { kind: 'json-schema', schema }, tools: [{ name: 't', parameters: { type: 'object' }, strict: true }] }), { structured_outputs: true });
    expect(native.output_config).toEqual({ format: { type: 'json_schema', schema } });
    expect(native.tools).toEqual([{ name: 't', input_schema: { type: 'object' }, strict: true }]);
    expect(body(chatRequest({ responseFormat: { kind: 'json' } })).system).toEqual(expect.stringContaining('JSON object') as string);
  });
});

describe('buildCountTokensRequest', () => {
  it('sends only prompt-shaping fields to /v1/messages/count_tokens and reads input_tokens', () => {
    const request = chatRequest({ system: [{ type: 'text', text: 'S' }], maxOutputTokens: 10, temperature: 0.5, stream: true, tools: [{ name: 't', parameters: { type: 'object' } }] });
    const upstream = adapter.countTokens.build(channel(), 'k', request, 'claude-upstream');
    expect(upstream.url).toBe('https://api.anthropic.com/v1/messages/count_tokens');
    expect(JSON.parse(String(upstream.body ?? ''))).toEqual({
      model: 'claude-upstream',
      system: 'S',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      tools: [{ name: 't', input_schema: { type: 'object' } }],
    });
    expect(adapter.countTokens.parse(Buffer.from('{"input_tokens":42}'))).toBe(42);
    expect(() => adapter.countTokens.parse(Buffer.from('{}'))).toThrow(GatewayError);
  });
});
