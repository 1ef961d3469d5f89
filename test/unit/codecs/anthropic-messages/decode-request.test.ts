import { describe, expect, it } from 'vitest';
import { anthropicMessagesCodec } from '../../../../src/codecs/anthropic-messages/index.js';
import { decodeAnthropicCountTokensRequest } from '../../../../src/codecs/anthropic-messages/count-tokens.js';
import { GatewayError } from '../../../../src/errors/gateway-error.js';
import { fixtureJson } from '../../anthropic/helpers.js';

const decode = (body: Record<string, unknown>) => anthropicMessagesCodec.decodeRequest(body, {});
const user = (content: unknown) => ({ role: 'user', content });

function badRequest(body: Record<string, unknown>): GatewayError {
  try {
    decode(body);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a 400');
}

describe('decodeRequest: a real tool-loop request', () => {
  it('maps every field the IR has and keeps the rest in extensions with warnings', () => {
    const request = decode(fixtureJson('request-tool-loop.json'));
    expect(request).toMatchObject({
      model: 'claude-sonnet-4-5',
      stream: false,
      maxOutputTokens: 4096,
      stopSequences: ['END'],
      toolChoice: { kind: 'auto' },
      parallelToolCalls: false,
      reasoning: { budgetTokens: 2048 },
      user: 'user-7f3a',
    });
    expect(request.system).toEqual([
      { type: 'text', text: 'You are a weather assistant.', cacheControl: { type: 'ephemeral' } },
      { type: 'text', text: 'Answer in one sentence.' },
    ]);
    expect(request.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: expect.any(String) as string } },
          { type: 'text', text: 'What is the weather where this photo was taken, in Paris?' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'The user wants the weather in Paris.', signature: 'EqQBCkgIBRABGAIiQL7mP1s2VQ5Ngp8zSxXaD4d7HhQm' },
          { type: 'text', text: 'Let me check.' },
          { type: 'tool-call', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', argumentsJson: '{"location":"Paris","unit":"celsius"}' },
        ],
      },
      {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 'toolu_01A09q90qw90lq917835lq9', toolName: 'get_weather', content: [{ type: 'text', text: '18 degrees, light rain' }] }],
      },
      { role: 'user', content: [{ type: 'text', text: 'And should I take an umbrella?' }] },
    ]);
    expect(request.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Get the current weather in a given location',
        parameters: { type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['location'] },
      },
    ]);
    expect(Object.keys(request.extensions).sort()).toEqual(['service_tier']);
    // The server-side web search tool maps to the canonical hosted tool, for every family's equivalent.
    expect(request.hostedTools).toEqual([{ kind: 'web-search', maxUses: 3 }]);
    expect(request.warnings).toEqual(["'service_tier' is not carried on the translated path."]);
  });
});

describe('decodeRequest: content', () => {
  it('splits a user turn mixing text and tool results in order', () => {
    const request = decode({
      model: 'm',
      max_tokens: 10,
      messages: [
        user('go'),
        { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'one', input: {} }, { type: 'tool_use', id: 'b', name: 'two', input: { x: 1 } }] },
        user([
          { type: 'text', text: 'before' },
          { type: 'tool_result', tool_use_id: 'a', content: 'A', is_error: true },
          { type: 'tool_result', tool_use_id: 'b', content: [{ type: 'text', text: 'B' }, { type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] },
          { type: 'text', text: 'after' },
        ]),
      ],
    });
    expect(request.messages.slice(2)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'before' }] },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'a', toolName: 'one', content: [{ type: 'text', text: 'A' }], isError: true },
          { type: 'tool-result', toolCallId: 'b', toolName: 'two', content: [{ type: 'text', text: 'B' }, { type: 'image', source: { kind: 'url', url: 'https://x/y.png' } }] },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'after' }] },
    ]);
  });

  it('decodes documents (PDF base64, URL, plain text with title) and redacted thinking', () => {
    const request = decode({
      model: 'm',
      max_tokens: 10,
      messages: [
        user([
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: 'report.pdf' },
          { type: 'document', source: { type: 'url', url: 'https://x/doc.pdf' } },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain words' } },
        ]),
        { role: 'assistant', content: [{ type: 'redacted_thinking', data: 'ENCRYPTED' }, { type: 'thinking', thinking: 'hm', signature: '' }] },
      ],
    });
    expect(request.messages[0]!.content).toEqual([
      { type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0=' }, filename: 'report.pdf' },
      { type: 'file', source: { kind: 'url', url: 'https://x/doc.pdf', mediaType: 'application/pdf' } },
      { type: 'file', source: { kind: 'base64', mediaType: 'text/plain', data: Buffer.from('plain words').toString('base64') } },
    ]);
    expect(request.messages[1]!.content).toEqual([{ type: 'reasoning', text: '', redactedData: 'ENCRYPTED' }, { type: 'reasoning', text: 'hm' }]);
  });

  it('keeps unknown block types and top-level fields, dropping them from the IR with warnings', () => {
    const request = decode({ model: 'm', max_tokens: 10, container: 'c1', messages: [user([{ type: 'search_result', source: 's', title: 't', content: [] }, { type: 'text', text: 'q' }])] });
    expect(request.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'q' }] }]);
    expect(request.extensions).toEqual({ 'messages.0.content.0': { type: 'search_result', source: 's', title: 't', content: [] }, container: 'c1' });
    expect(request.warnings).toHaveLength(2);
  });

  it('reads the prefill: an empty final assistant message is allowed and dropped', () => {
    expect(decode({ model: 'm', max_tokens: 5, messages: [user('a'), { role: 'assistant', content: '' }] }).messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'a' }] }]);
  });
});

describe('decodeRequest: options', () => {
  it('maps tool_choice kinds', () => {
    const tools = [{ name: 't', input_schema: { type: 'object' } }];
    const choice = (tool_choice: unknown) => decode({ model: 'm', max_tokens: 5, tools, tool_choice, messages: [user('a')] });
    expect(choice({ type: 'any' })).toMatchObject({ toolChoice: { kind: 'required' } });
    expect(choice({ type: 'tool', name: 't', disable_parallel_tool_use: false })).toMatchObject({ toolChoice: { kind: 'tool', name: 't' }, parallelToolCalls: true });
    expect(choice({ type: 'none' })).toMatchObject({ toolChoice: { kind: 'none' } });
  });

  it('maps thinking variants and output_config', () => {
    const base = { model: 'm', max_tokens: 5000, messages: [user('a')] };
    expect(decode({ ...base, thinking: { type: 'disabled' } }).reasoning).toEqual({ budgetTokens: 0 });
    expect(decode({ ...base, thinking: { type: 'adaptive' } }).reasoning).toEqual({ includeThoughts: true });
    expect(decode({ ...base, thinking: { type: 'adaptive' }, output_config: { effort: 'max' } }).reasoning).toEqual({ effort: 'high' });
    expect(decode({ ...base, thinking: { type: 'enabled', budget_tokens: 1024, display: 'omitted' } }).reasoning).toEqual({ budgetTokens: 1024, includeThoughts: false });
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    expect(decode({ ...base, output_config: { effort: 'low', format: { type: 'json_schema', schema } } })).toMatchObject({ reasoning: { effort: 'low' }, responseFormat: { kind: 'json-schema', schema } });
  });

  it('takes stream from the body, or from the route hint', () => {
    expect(decode({ model: 'm', max_tokens: 5, stream: true, messages: [user('a')] }).stream).toBe(true);
    expect(anthropicMessagesCodec.decodeRequest({ model: 'm', max_tokens: 5, messages: [user('a')] }, { stream: true }).stream).toBe(true);
  });

  it('keeps a mid-conversation system message in its place', () => {
    const request = decodeAnthropicCountTokensRequest({ model: 'm', messages: [user('a'), { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] }, { role: 'assistant', content: 'ok' }] });
    expect(request.messages.map((message) => message.role)).toEqual(['user', 'system', 'assistant']);
    expect(request.messages[1]?.content).toEqual([{ type: 'text', text: 'Be brief.' }]);
    expect(request.system).toEqual([]);
  });

  it('decodes a count_tokens body without max_tokens', () => {
    const request = decodeAnthropicCountTokensRequest({ model: 'm', messages: [user('count me')] });
    expect(request.maxOutputTokens).toBeUndefined();
    expect(request.messages).toHaveLength(1);
  });
});

describe('decodeRequest: validation like Anthropic', () => {
  const ok = { model: 'm', max_tokens: 5, messages: [user('a')] };
  it.each([
    ['model', { ...ok, model: undefined }, 'model: Field required.'],
    ['max_tokens', { ...ok, max_tokens: undefined }, 'max_tokens: Field required.'],
    ['max_tokens', { ...ok, max_tokens: 0 }, 'max_tokens: Input should be greater than or equal to 1.'],
    ['max_tokens', { ...ok, max_tokens: 1.5 }, 'max_tokens: Input should be a valid integer.'],
    ['messages', { ...ok, messages: [] }, 'messages: at least one message is required.'],
    ['messages.0.role', { ...ok, messages: [{ role: 'developer', content: 'x' }] }, "messages.0.role: Input should be 'user', 'assistant' or 'system'."],
    ['messages.1.content.0.type', { ...ok, messages: [user('a'), { role: 'system', content: [{ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] }] }, "messages.1.content.0.type: system messages take only 'text' blocks."],
    ['messages.0', { ...ok, messages: [user('')] }, 'messages.0: all messages must have non-empty content except for the optional final assistant message.'],
    ['messages.0.content.0', { ...ok, messages: [user([{ type: 'text', text: '' }])] }, 'messages.0.content.0: text content blocks must be non-empty.'],
    ['messages.0.content.0.source.media_type', { ...ok, messages: [user([{ type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: 'x' } }])] }, "messages.0.content.0.source.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'."],
    ['messages.0.content.0', { ...ok, messages: [user([{ type: 'tool_use', id: 'a', name: 'b', input: {} }])] }, 'messages.0.content.0: `tool_use` blocks can only be in `assistant` messages.'],
    ['messages.0.content.0', { ...ok, messages: [user([{ type: 'tool_result', tool_use_id: 'nope' }])] }, expect.stringContaining('unexpected `tool_use_id`') as string],
    ['messages.1.content.0.signature', { ...ok, messages: [user('a'), { role: 'assistant', content: [{ type: 'thinking', thinking: 'x' }] }] }, 'messages.1.content.0.signature: Field required.'],
    ['system.0.type', { ...ok, system: [{ type: 'image' }] }, "system.0.type: Input should be 'text'."],
    ['temperature', { ...ok, temperature: 1.2 }, 'temperature: Input should be between 0 and 1.'],
    ['top_p', { ...ok, top_p: -0.1 }, 'top_p: Input should be between 0 and 1.'],
    ['top_k', { ...ok, top_k: 1.5 }, 'top_k: Input should be a valid integer.'],
    ['stop_sequences.0', { ...ok, stop_sequences: [3] }, 'stop_sequences.0: Input should be a valid string.'],
    ['tools.0.input_schema', { ...ok, tools: [{ name: 'x' }] }, 'tools.0.input_schema: Field required.'],
    ['tools.0.name', { ...ok, tools: [{ name: 'bad name', input_schema: { type: 'object' } }] }, expect.stringContaining('should match pattern') as string],
    ['tool_choice.type', { ...ok, tool_choice: { type: 'sometimes' } }, "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'."],
    ['thinking.enabled.budget_tokens', { ...ok, thinking: { type: 'enabled', budget_tokens: 100 } }, 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024.'],
    ['max_tokens', { ...ok, max_tokens: 1024, thinking: { type: 'enabled', budget_tokens: 1024 } }, 'max_tokens: `max_tokens` must be greater than `thinking.budget_tokens`.'],
    ['metadata.session', { ...ok, metadata: { session: 'x' } }, 'metadata.session: Extra inputs are not permitted.'],
    ['stream', { ...ok, stream: 'yes' }, 'stream: Input should be a valid boolean.'],
  ] as const)('400 naming %s', (param, body, message) => {
    const error = badRequest(body as Record<string, unknown>);
    expect(error.status).toBe(400);
    expect(error.code).toBe('bad_request');
    expect(error.param).toBe(param);
    expect(error.message).toEqual(message);
  });
});
