import { describe, expect, it } from 'vitest';
import { anthropicMessagesCodec } from '../../../../src/codecs/anthropic-messages/index.js';
import type { StreamPart } from '../../../../src/ir/stream-part.js';
import type { Usage } from '../../../../src/ir/usage.js';
import { sdkAnswering } from '../../anthropic/helpers.js';

const usage: Usage = { input: { total: 1300, noCache: 100, cacheRead: 1200, cacheWrite: 0 }, output: { total: 42, text: 30, reasoning: 12 } };

function encode(parts: StreamPart[]): string {
  const encoder = anthropicMessagesCodec.createStreamEncoder({ model: 'public-model' });
  return parts.map((part) => encoder.encode(part)).join('') + encoder.end();
}

function events(sse: string): Array<{ event: string; data: Record<string, unknown> }> {
  return sse
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => {
      const [eventLine, dataLine] = block.split('\n') as [string, string];
      return { event: eventLine.slice('event: '.length), data: JSON.parse(dataLine.slice('data: '.length)) as Record<string, unknown> };
    });
}

async function finalMessage(sse: string) {
  return sdkAnswering(sse).messages.stream({ model: 'public-model', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).finalMessage();
}

describe('the stream encoder', () => {
  it('writes the event sequence the SDK rebuilds: thinking with signature, text, tool input (its Gemini signature carried in a thinking block before it), usage', async () => {
    const sse = encode([
      { type: 'response-start', id: 'msg_01abc', model: 'claude-upstream', created: 1 },
      { type: 'usage', usage: { ...usage, output: { total: 1, text: 1, reasoning: 0 } } },
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-delta', id: 'r', delta: 'Let me ' },
      { type: 'reasoning-delta', id: 'r', delta: 'think.' },
      { type: 'reasoning-end', id: 'r', signature: 'sig==' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'Checking' },
      { type: 'text-delta', id: 't', delta: '' },
      { type: 'text-end', id: 't', signature: 'gemini-only' },
      { type: 'tool-input-start', id: 'c', toolCallId: 'toolu_1', toolName: 'get_weather', index: 0, signature: 'gemini-call' },
      { type: 'tool-input-delta', id: 'c', delta: '{"location":' },
      { type: 'tool-input-delta', id: 'c', delta: '"Paris"}' },
      { type: 'tool-input-end', id: 'c' },
      { type: 'usage', usage },
      { type: 'finish', reason: { unified: 'tool-calls', raw: 'tool_use' }, usage },
    ]);
    expect(events(sse).map((event) => event.event)).toEqual([
      'message_start',
      'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_delta', 'content_block_stop',
      'content_block_start', 'content_block_delta', 'content_block_stop',
      'content_block_start', 'content_block_delta', 'content_block_stop',
      'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop',
      'message_delta', 'message_stop',
    ]);
    const start = events(sse)[0]!.data as { message: { usage: Record<string, number>; id: string; model: string } };
    expect(start.message).toMatchObject({ id: 'msg_01abc', model: 'public-model', usage: { input_tokens: 100, cache_read_input_tokens: 1200, cache_creation_input_tokens: 0, output_tokens: 1 } });
    const message = await finalMessage(sse);
    // The text's signature came after its text: there is no place before it, and none after it.
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Let me think.', signature: 'sig==' },
      { type: 'text', text: 'Checking' },
      { type: 'thinking', thinking: '', signature: 'ugw1.n.gemini-call' },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } },
    ]);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage).toMatchObject({ input_tokens: 100, cache_read_input_tokens: 1200, output_tokens: 42, output_tokens_details: { thinking_tokens: 12 } });
  });

  it("carries Gemini's signature of a call on the unsigned thoughts before it, as one native thinking block", async () => {
    const sse = encode([
      { type: 'response-start', id: 'gen-1', model: 'gemini-3-pro-preview', created: 1 },
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-delta', id: 'r', delta: 'I should run it.' },
      { type: 'reasoning-end', id: 'r' },
      { type: 'tool-input-start', id: 'c', toolCallId: 'call_1', toolName: 'Bash', index: 0, signature: 'c2ln' },
      { type: 'tool-input-delta', id: 'c', delta: '{"command":"ls"}' },
      { type: 'tool-input-end', id: 'c' },
      { type: 'tool-input-start', id: 'd', toolCallId: 'call_2', toolName: 'Bash', index: 1 },
      { type: 'tool-input-delta', id: 'd', delta: '{"command":"pwd"}' },
      { type: 'tool-input-end', id: 'd' },
      { type: 'finish', reason: { unified: 'tool-calls', raw: 'STOP' }, usage },
    ]);
    const blocks = events(sse).filter((event) => event.event.startsWith('content_block'));
    // The thinking block stops once its signature is known, before the tool use starts.
    expect(blocks.map((event) => `${event.event.slice(14)}:${String(event.data.index)}`)).toEqual([
      'start:0', 'delta:0', 'delta:0', 'stop:0', 'start:1', 'delta:1', 'stop:1', 'start:2', 'delta:2', 'stop:2',
    ]);
    expect(blocks[0]!.data.content_block).toEqual({ type: 'thinking', thinking: '', signature: '' });
    const message = await finalMessage(sse);
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'I should run it.', signature: 'ugw1.n.c2ln' },
      { type: 'tool_use', id: 'call_1', name: 'Bash', input: { command: 'ls' } },
      { type: 'tool_use', id: 'call_2', name: 'Bash', input: { command: 'pwd' } },
    ]);
  });

  it("ends with the text when Gemini's signature of it comes last, and writes no block of only a signature", async () => {
    const sse = encode([
      { type: 'response-start', id: 'gen-2', model: 'gemini-3-pro-preview', created: 1 },
      { type: 'tool-input-start', id: 'c', toolCallId: 'call_1', toolName: 'Bash', index: 0, signature: 'c2ln' },
      { type: 'tool-input-delta', id: 'c', delta: '{}' },
      { type: 'tool-input-end', id: 'c' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'Done.' },
      { type: 'text-end', id: 't', signature: 'dGV4dA==' },
      { type: 'text-start', id: 'u' },
      { type: 'text-end', id: 'u', signature: 'b3JwaGFu' },
      { type: 'finish', reason: { unified: 'stop', raw: 'STOP' }, usage },
    ]);
    const message = await finalMessage(sse);
    expect(message.content).toEqual([
      { type: 'thinking', thinking: '', signature: 'ugw1.n.c2ln' },
      { type: 'tool_use', id: 'call_1', name: 'Bash', input: {} },
      { type: 'text', text: 'Done.' },
    ]);
    expect(sse).not.toContain('dGV4dA==');
    expect(sse).not.toContain('b3JwaGFu');
  });

  it('puts usage known only at the finish into message_delta, where the SDK takes it', async () => {
    const sse = encode([
      { type: 'response-start', id: 'chatcmpl-1', model: 'gpt', created: 1 },
      { type: 'text-start', id: '0' },
      { type: 'text-delta', id: '0', delta: 'Hi' },
      { type: 'text-end', id: '0' },
      { type: 'finish', reason: { unified: 'stop', raw: 'stop' }, usage },
    ]);
    const start = events(sse)[0]!.data as { message: { id: string; usage: Record<string, number> } };
    expect(start.message.id).toBe('msg_chatcmpl-1');
    expect(start.message.usage.input_tokens).toBe(0);
    const message = await finalMessage(sse);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage).toMatchObject({ input_tokens: 100, cache_read_input_tokens: 1200, output_tokens: 42 });
  });

  it('writes interleaved parallel tool inputs one block after the other', async () => {
    const sse = encode([
      { type: 'response-start', id: 'x', model: 'gpt', created: 1 },
      { type: 'tool-input-start', id: 'a', toolCallId: 'call_a', toolName: 'one', index: 0 },
      { type: 'tool-input-start', id: 'b', toolCallId: 'call_b', toolName: 'two', index: 1 },
      { type: 'tool-input-delta', id: 'b', delta: '{"b":' },
      { type: 'tool-input-delta', id: 'a', delta: '{"a":1}' },
      { type: 'tool-input-delta', id: 'b', delta: '2}' },
      { type: 'tool-input-end', id: 'b' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'after' },
      { type: 'tool-input-end', id: 'a' },
      { type: 'finish', reason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: null },
    ]);
    const indexes = events(sse).filter((event) => event.event.startsWith('content_block')).map((event) => `${event.event.slice(14)}:${String(event.data.index)}`);
    expect(indexes).toEqual(['start:0', 'delta:0', 'stop:0', 'start:1', 'delta:1', 'delta:1', 'stop:1', 'start:2', 'delta:2', 'stop:2']);
    const message = await finalMessage(sse);
    expect(message.content).toEqual([
      { type: 'tool_use', id: 'call_a', name: 'one', input: { a: 1 } },
      { type: 'tool_use', id: 'call_b', name: 'two', input: { b: 2 } },
      { type: 'text', text: 'after' },
    ]);
    expect(message.usage.output_tokens).toBe(0);
  });

  it('writes redacted reasoning as a redacted_thinking block, and closes blocks left open at the finish', async () => {
    const sse = encode([
      { type: 'response-start', id: 'msg_1', model: 'c', created: 1 },
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-end', id: 'r', redactedData: 'ENC' },
      { type: 'reasoning-start', id: 's' },
      { type: 'reasoning-end', id: 's', signature: 'only-signature' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'cut' },
      { type: 'finish', reason: { unified: 'length', raw: 'max_tokens' }, usage: null },
    ]);
    const message = await finalMessage(sse);
    expect(message.content).toEqual([
      { type: 'redacted_thinking', data: 'ENC' },
      { type: 'thinking', thinking: '', signature: 'only-signature' },
      { type: 'text', text: 'cut' },
    ]);
    expect(message.stop_reason).toBe('max_tokens');
  });

  it('turns an error part into an error event the SDK raises, and writes nothing after it', async () => {
    const encoder = anthropicMessagesCodec.createStreamEncoder({ model: 'm' });
    const sse =
      encoder.encode({ type: 'response-start', id: 'msg_1', model: 'c', created: 1 }) +
      encoder.encode({ type: 'text-start', id: 't' }) +
      encoder.encode({ type: 'text-delta', id: 't', delta: 'par' }) +
      encoder.encode({ type: 'error', status: 503, code: 'upstream_unavailable', message: 'Upstream overloaded: Overloaded' });
    expect(encoder.encode({ type: 'text-delta', id: 't', delta: 'tial' })).toBe('');
    expect(encoder.end()).toBe('');
    expect(events(sse).at(-1)).toEqual({ event: 'error', data: { type: 'error', error: { type: 'api_error', message: 'Upstream overloaded: Overloaded', code: 'upstream_unavailable' } } });
    await expect(finalMessage(sse)).rejects.toMatchObject({ type: 'api_error' });
  });
});
