import { describe, expect, it } from 'vitest';
import { anthropicMessagesCodec } from '../../../../src/codecs/anthropic-messages/index.js';
import type { ChatResponse } from '../../../../src/ir/chat-response.js';
import { sdkAnswering } from '../../anthropic/helpers.js';

function response(overrides: Partial<ChatResponse> = {}): ChatResponse {
  return {
    id: 'chatcmpl-abc123',
    model: 'gpt-4o-2024-08-06',
    created: 1_700_000_000,
    content: [{ type: 'text', text: 'Hello.' }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage: { input: { total: 120, noCache: 20, cacheRead: 100, cacheWrite: 0 }, output: { total: 30, text: 18, reasoning: 12 } },
    warnings: [],
    ...overrides,
  };
}

describe('encodeResponse', () => {
  it('writes an Anthropic message the SDK reads, naming the public model', async () => {
    const encoded = anthropicMessagesCodec.encodeResponse(
      response({
        content: [
          { type: 'reasoning', text: 'Think.', signature: 'sig-1' },
          { type: 'reasoning', text: '', redactedData: 'REDACTED' },
          { type: 'text', text: 'Calling.' },
          { type: 'tool-call', id: 'call_1', name: 'lookup', argumentsJson: '{"q":"x"}' },
          { type: 'tool-call', id: 'call_2', name: 'broken', argumentsJson: '{"q":' },
          { type: 'image', source: { kind: 'url', url: 'https://x/y.png' } },
        ],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      }),
      'public-model',
    );
    const message = await sdkAnswering(encoded).messages.create({ model: 'public-model', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
    expect(message).toEqual({
      id: 'msg_chatcmpl-abc123',
      type: 'message',
      role: 'assistant',
      model: 'public-model',
      content: [
        { type: 'thinking', thinking: 'Think.', signature: 'sig-1' },
        { type: 'redacted_thinking', data: 'REDACTED' },
        { type: 'text', text: 'Calling.' },
        { type: 'tool_use', id: 'call_1', name: 'lookup', input: { q: 'x' } },
        { type: 'tool_use', id: 'call_2', name: 'broken', input: {} },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 100, output_tokens: 30, output_tokens_details: { thinking_tokens: 12 } },
    });
  });

  it("carries Gemini's signatures before the blocks they sign and ends with the answer, as Anthropic orders blocks", () => {
    const blocks = (content: ChatResponse['content']): unknown[] => (JSON.parse(anthropicMessagesCodec.encodeResponse(response({ content }), 'm')) as { content: unknown[] }).content;
    // Thoughts without a signature of their own take the call's; the call after it has none.
    expect(blocks([
      { type: 'reasoning', text: 'Plan.' },
      { type: 'tool-call', id: 'c1', name: 'Bash', argumentsJson: '{}', signature: 'c2lnMQ==' },
      { type: 'tool-call', id: 'c2', name: 'Bash', argumentsJson: '{}' },
    ])).toEqual([
      { type: 'thinking', thinking: 'Plan.', signature: 'ugw1.n.c2lnMQ==' },
      { type: 'tool_use', id: 'c1', name: 'Bash', input: {} },
      { type: 'tool_use', id: 'c2', name: 'Bash', input: {} },
    ]);
    // Without thoughts (Claude Code asks for thinking with display "omitted"): an empty thinking block, as Anthropic's.
    expect(blocks([{ type: 'text', text: 'Answer.', signature: 'dGV4dA==' }])).toEqual([
      { type: 'thinking', thinking: '', signature: 'ugw1.n.dGV4dA==' },
      { type: 'text', text: 'Answer.' },
    ]);
    // Signed thoughts keep their own signature; empty text that only carried a signature and empty thoughts are left out.
    expect(blocks([
      { type: 'reasoning', text: '' },
      { type: 'reasoning', text: 'Own.', signature: 'b3du' },
      { type: 'text', text: 'Answer.', signature: 'dGV4dA==' },
      { type: 'text', text: '', signature: 'bGF0ZQ==' },
    ])).toEqual([
      { type: 'thinking', thinking: 'Own.', signature: 'b3du' },
      { type: 'thinking', thinking: '', signature: 'ugw1.n.dGV4dA==' },
      { type: 'text', text: 'Answer.' },
    ]);
  });

  it.each([
    [{ unified: 'stop', raw: 'STOP' }, 'end_turn'],
    [{ unified: 'length', raw: 'length' }, 'max_tokens'],
    [{ unified: 'content-filter', raw: 'SAFETY' }, 'refusal'],
    [{ unified: 'other', raw: 'pause_turn' }, 'pause_turn'],
    [{ unified: 'stop', raw: 'stop_sequence' }, 'stop_sequence'],
    [{ unified: 'error', raw: null }, 'end_turn'],
  ] as const)('maps finish reason %o to %s', (finishReason, stopReason) => {
    const message = JSON.parse(anthropicMessagesCodec.encodeResponse(response({ finishReason }), 'm')) as { stop_reason: string };
    expect(message.stop_reason).toBe(stopReason);
  });

  it('says tool_use whenever tool calls are present, whatever the upstream said', () => {
    const message = JSON.parse(
      anthropicMessagesCodec.encodeResponse(response({ content: [{ type: 'tool-call', id: 't', name: 'n', argumentsJson: '{}' }], finishReason: { unified: 'stop', raw: 'stop' } }), 'm'),
    ) as { stop_reason: string };
    expect(message.stop_reason).toBe('tool_use');
  });

  it('keeps msg_ ids and leaves output_tokens_details out without reasoning', () => {
    const message = JSON.parse(
      anthropicMessagesCodec.encodeResponse(response({ id: 'msg_01X', usage: { input: { total: 5, noCache: 5, cacheRead: 0, cacheWrite: 0 }, output: { total: 3, text: 3, reasoning: 0 } } }), 'm'),
    ) as Record<string, unknown>;
    expect(message.id).toBe('msg_01X');
    expect(message.usage).toEqual({ input_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 3 });
  });
});
