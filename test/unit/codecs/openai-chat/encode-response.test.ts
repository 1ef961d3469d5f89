import { billedUsage } from '../../../support/billed-usage.js';
import { countTextTokensLocally } from '../../../../src/tokenize/count-tokens-locally.js';
import { describe, expect, it } from 'vitest';
import { openAIChatCodec, openAIChatCodecFor } from '../../../../src/codecs/openai-chat/index.js';
import { openAIFamily } from '../../../../src/codecs/openai-chat/family.js';
import { GatewayError } from '../../../../src/errors/gateway-error.js';
import type { ChatResponse } from '../../../../src/ir/chat-response.js';
import type { Usage } from '../../../../src/ir/usage.js';

const usage: Usage = { input: { total: 120, noCache: 70, cacheRead: 40, cacheWrite: 10 }, output: { total: 50, text: 30, reasoning: 20 } };

function response(overrides: Partial<ChatResponse> = {}): ChatResponse {
  return {
    id: 'msg_01XFDUDYJgAACzvnptvVoYEL', model: 'claude-sonnet-4-5', created: 1_745_000_000, content: [{ type: 'text', text: 'Hello' }],
    finishReason: { unified: 'stop', raw: 'end_turn' }, usage, warnings: [], ...overrides,
  };
}

const encode = (value: ChatResponse): Record<string, unknown> => JSON.parse(openAIChatCodec.encodeResponse(value, 'public-model')) as Record<string, unknown>;

describe('openAIChatCodec.encodeResponse', () => {
  it('answers a chat.completion with the public model, a chatcmpl id and full usage details', () => {
    expect(encode(response())).toEqual({
      id: 'chatcmpl-msg_01XFDUDYJgAACzvnptvVoYEL',
      object: 'chat.completion',
      created: 1_745_000_000,
      model: 'public-model',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello', refusal: null, annotations: [] }, logprobs: null, finish_reason: 'stop' }],
      usage: {
        prompt_tokens: 120,
        completion_tokens: 50,
        total_tokens: 170,
        prompt_tokens_details: { cached_tokens: 40, audio_tokens: 0, cache_write_tokens: 10 },
        completion_tokens_details: { reasoning_tokens: 20, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
      },
    });
  });

  it('keeps an id that is already a chatcmpl id and makes one when there is none', () => {
    expect(encode(response({ id: 'chatcmpl-abc' })).id).toBe('chatcmpl-abc');
    expect(encode(response({ id: '' })).id).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
  });

  it('sends tool calls with null content and finish_reason tool_calls, whatever the upstream called it', () => {
    const body = encode(response({
      content: [
        { type: 'tool-call', id: 'toolu_1', name: 'get_weather', argumentsJson: '{"city":"Paris"}' },
        { type: 'tool-call', id: 'toolu_2', name: 'ping', argumentsJson: '' },
      ],
      finishReason: { unified: 'stop', raw: 'STOP' },
    }));
    expect(body.choices).toEqual([{
      index: 0,
      message: {
        role: 'assistant', content: null, refusal: null, annotations: [],
        tool_calls: [
          { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'toolu_2', type: 'function', function: { name: 'ping', arguments: '{}' } },
        ],
      },
      logprobs: null,
      finish_reason: 'tool_calls',
    }]);
  });

  it('joins text parts, sends reasoning as reasoning_content and leaves out images', () => {
    const body = encode(response({
      content: [
        { type: 'reasoning', text: 'Think', signature: 'sig' },
        { type: 'reasoning', text: ' more' },
        { type: 'text', text: 'Part one, ' },
        { type: 'image', source: { kind: 'url', url: 'https://x/y.png' } },
        { type: 'text', text: 'part two.' },
      ],
    }));
    const message = (body.choices as Array<{ message: Record<string, unknown> }>)[0]?.message;
    expect(message).toEqual({ role: 'assistant', content: 'Part one, part two.', refusal: null, annotations: [], reasoning_content: 'Think more' });
  });

  it('maps finish reasons', () => {
    const finish = (unified: ChatResponse['finishReason']['unified']): unknown =>
      (encode(response({ finishReason: { unified, raw: null } })).choices as Array<{ finish_reason: unknown }>)[0]?.finish_reason;
    expect(finish('stop')).toBe('stop');
    expect(finish('length')).toBe('length');
    expect(finish('content-filter')).toBe('content_filter');
    expect(finish('tool-calls')).toBe('tool_calls');
    expect(finish('error')).toBe('stop');
    expect(finish('other')).toBe('stop');
  });

  it('leaves cache_write_tokens out when there were none', () => {
    const body = encode(response({ usage: { input: { total: 5, noCache: 5, cacheRead: 0, cacheWrite: 0 }, output: { total: 1, text: 1, reasoning: 0 } } }));
    expect((body.usage as { prompt_tokens_details: unknown }).prompt_tokens_details).toEqual({ cached_tokens: 0, audio_tokens: 0 });
  });
});

describe('openAIChatCodec errors and pass-through helpers', () => {
  it('encodes errors in OpenAI shape, in a body and as a stream event', () => {
    const error = new GatewayError('bad_request', 'Nope.', { param: 'messages' });
    expect(JSON.parse(openAIFamily.encodeError(error))).toEqual({ error: { message: 'Nope.', type: 'invalid_request_error', code: 'bad_request', param: 'messages' } });
    expect(openAIChatCodec.encodeStreamError(error)).toBe(`data: ${openAIFamily.encodeError(error)}\n\n`);
  });

  it('reads usage off a pass-through body and stream, counting the delivered text when the stream is cut', async () => {
    expect(openAIChatCodec.wire.name).toBe('openai-chat');
    expect(openAIChatCodec.passThrough.headers).toEqual([]);
    expect(openAIChatCodec.passThrough.usageFromResponseBody(Buffer.from('{"usage":{"prompt_tokens":3,"completion_tokens":4}}'))?.output.total).toBe(4);
    const sse = (value: unknown): Buffer => Buffer.from(`data: ${JSON.stringify(value)}\n\n`);
    const observer = openAIChatCodec.passThrough.createObserver();
    // Nothing arrived yet: the upstream has not accepted the request, which is free.
    expect(await billedUsage(observer, 10, false)).toBeNull();
    const texts = ['', 'The grey heron', ' stands still.'];
    for (const text of texts) expect(observer.observe(sse({ choices: [{ index: 0, delta: { content: text } }] }))).toBe(true);
    const counted = await countTextTokensLocally(texts.join(''));
    expect(counted).toBeGreaterThan(2);
    expect(await billedUsage(observer, 10)).toEqual({ input: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, output: { total: counted, text: counted, reasoning: 0 } });
    expect(observer.observe(sse({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 2 } }))).toBe(false);
    expect((await billedUsage(observer, 10))?.input.total).toBe(7);
    expect((await billedUsage(observer, 10))?.output.total).toBe(2);
    const wanting = openAIChatCodecFor({ includeUsage: true }).passThrough.createObserver();
    expect(wanting.observe(sse({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 2 } }))).toBe(true);
  });
});
