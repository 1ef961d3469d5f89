import { describe, expect, it } from 'vitest';
import { openAIChatCodecFor } from '../../../../src/codecs/openai-chat/index.js';
import type { StreamPart } from '../../../../src/ir/stream-part.js';
import type { Usage } from '../../../../src/ir/usage.js';

const usage: Usage = { input: { total: 12, noCache: 12, cacheRead: 0, cacheWrite: 0 }, output: { total: 5, text: 5, reasoning: 0 } };

function encodeAll(parts: StreamPart[], includeUsage: boolean): string {
  const encoder = openAIChatCodecFor({ includeUsage }).createStreamEncoder({ model: 'public-model' });
  return parts.map((part) => encoder.encode(part)).join('') + encoder.end();
}

/** The data payloads of an SSE text, JSON-parsed except [DONE]. */
function payloads(text: string): unknown[] {
  expect(text.endsWith('\n\n')).toBe(true);
  return text.split('\n\n').filter((event) => event !== '').map((event) => {
    expect(event.startsWith('data: ')).toBe(true);
    const data = event.slice(6);
    return data === '[DONE]' ? data : JSON.parse(data);
  });
}

const start: StreamPart = { type: 'response-start', id: 'msg_1', model: 'claude-x', created: 1_700_000_000 };

describe('OpenAIChatStreamEncoder', () => {
  it('frames text like OpenAI: role chunk, deltas, finish chunk, usage chunk when asked, [DONE]', () => {
    const text = encodeAll([
      start,
      { type: 'text-start', id: 't0' },
      { type: 'text-delta', id: 't0', delta: 'Hel' },
      { type: 'text-delta', id: 't0', delta: '' },
      { type: 'text-delta', id: 't0', delta: 'lo' },
      { type: 'text-end', id: 't0' },
      { type: 'usage', usage },
      { type: 'finish', reason: { unified: 'stop', raw: 'end_turn' }, usage },
    ], true);
    const base = { id: 'chatcmpl-msg_1', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'public-model' };
    expect(payloads(text)).toEqual([
      { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }], usage: null },
      { ...base, choices: [{ index: 0, delta: { content: 'Hel' }, logprobs: null, finish_reason: null }], usage: null },
      { ...base, choices: [{ index: 0, delta: { content: 'lo' }, logprobs: null, finish_reason: null }], usage: null },
      { ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }], usage: null },
      {
        ...base,
        choices: [],
        usage: {
          prompt_tokens: 12, completion_tokens: 5, total_tokens: 17,
          prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
          completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
        },
      },
      '[DONE]',
    ]);
  });

  it('sends no usage at all when the caller did not ask', () => {
    const events = payloads(encodeAll([start, { type: 'text-delta', id: 't', delta: 'x' }, { type: 'finish', reason: { unified: 'length', raw: 'max_tokens' }, usage }], false));
    expect(events).toHaveLength(4);
    for (const event of events.slice(0, 3)) expect(event).not.toHaveProperty('usage');
    expect((events[2] as { choices: Array<{ finish_reason: string }> }).choices[0]?.finish_reason).toBe('length');
  });

  it('numbers tool calls by order of appearance, id and name first, arguments after, {} for calls without arguments', () => {
    const events = payloads(encodeAll([
      start,
      { type: 'text-delta', id: 't', delta: 'Checking.' },
      { type: 'tool-input-start', id: 'a', toolCallId: 'toolu_a', toolName: 'get_weather', index: 0 },
      { type: 'tool-input-start', id: 'b', toolCallId: 'toolu_b', toolName: 'ping', index: 1 },
      { type: 'tool-input-delta', id: 'a', delta: '{"city":' },
      { type: 'tool-input-delta', id: 'a', delta: '"Oslo"}' },
      { type: 'tool-input-end', id: 'a' },
      { type: 'tool-input-end', id: 'b' },
      { type: 'finish', reason: { unified: 'stop', raw: 'STOP' }, usage: null },
    ], false)) as Array<{ choices: Array<{ delta: Record<string, unknown>; finish_reason: string | null }> }>;
    const deltas = events.slice(0, -1).map((event) => event.choices[0]?.delta);
    expect(deltas.slice(2)).toEqual([
      { tool_calls: [{ index: 0, id: 'toolu_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
      { tool_calls: [{ index: 1, id: 'toolu_b', type: 'function', function: { name: 'ping', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '{}' } }] },
      {},
    ]);
    expect(events.at(-2)?.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('sends reasoning as reasoning_content deltas', () => {
    const events = payloads(encodeAll([start, { type: 'reasoning-start', id: 'r' }, { type: 'reasoning-delta', id: 'r', delta: 'hmm' }, { type: 'reasoning-end', id: 'r', signature: 's' }, { type: 'finish', reason: { unified: 'stop', raw: null }, usage: null }], false));
    expect((events[1] as { choices: Array<{ delta: unknown }> }).choices[0]?.delta).toEqual({ reasoning_content: 'hmm' });
  });

  it('turns an error part into an error event and sends no [DONE]', () => {
    const text = encodeAll([start, { type: 'text-delta', id: 't', delta: 'x' }, { type: 'error', status: 502, code: 'upstream_error', message: 'The upstream provider failed.' }], true);
    const events = payloads(text);
    expect(events.at(-1)).toEqual({ error: { message: 'The upstream provider failed.', type: 'upstream_error', code: 'upstream_error', param: null } });
    expect(text).not.toContain('[DONE]');
    const rateLimited = payloads(encodeAll([{ type: 'error', status: 429, code: 'overloaded', message: 'slow down' }], false));
    expect(rateLimited).toEqual([{ error: { message: 'slow down', type: 'rate_limit_error', code: 'overloaded', param: null } }]);
  });

  it('starts a stream without response-start on its own, and ignores parts after the finish', () => {
    const encoder = openAIChatCodecFor({ includeUsage: false }).createStreamEncoder({ model: 'm' });
    const first = payloads(encoder.encode({ type: 'text-delta', id: 't', delta: 'x' }));
    expect(first).toHaveLength(2);
    expect((first[0] as { id: string }).id).toMatch(/^chatcmpl-/);
    encoder.encode({ type: 'finish', reason: { unified: 'stop', raw: null }, usage: null });
    expect(encoder.encode({ type: 'text-delta', id: 't', delta: 'late' })).toBe('');
    expect(encoder.end()).toBe('data: [DONE]\n\n');
  });
});
