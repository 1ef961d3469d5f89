import { describe, expect, it } from 'vitest';
import { validateOpenAIChatRequest } from '../../../../src/codecs/openai-chat/validate-request.js';
import { GatewayError } from '../../../../src/errors/gateway-error.js';

const valid = (): Record<string, unknown> => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });

function rejection(body: Record<string, unknown>): GatewayError {
  try {
    validateOpenAIChatRequest(body);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(body)} to be rejected`);
}

function expectBadRequest(body: Record<string, unknown>, param: string): void {
  const error = rejection(body);
  expect(error.code).toBe('bad_request');
  expect(error.status).toBe(400);
  expect(error.type).toBe('invalid_request_error');
  expect(error.param).toBe(param);
  expect(error.message).toContain(param);
}

describe('validateOpenAIChatRequest: rejections', () => {
  it.each<[string, unknown]>([['missing', undefined], ['empty', ''], ['blank', '   '], ['number', 4], ['null', null]])('model %s', (_name, model) => {
    expectBadRequest({ ...valid(), model }, 'model');
  });

  it.each<[string, unknown]>([['missing', undefined], ['empty', []], ['string', 'hi'], ['object', { role: 'user', content: 'x' }]])('messages %s', (_name, messages) => {
    expectBadRequest({ ...valid(), messages }, 'messages');
  });

  it.each<[string, unknown]>([['null', null], ['string', 'hi'], ['array', [{ role: 'user' }]]])('a message that is %s', (_name, message) => {
    expectBadRequest({ ...valid(), messages: [{ role: 'user', content: 'a' }, message] }, 'messages[1]');
  });

  it.each<[string, unknown]>([['missing', undefined], ['unknown', 'robot'], ['number', 1], ['upper case', 'User']])('role %s', (_name, role) => {
    expectBadRequest({ ...valid(), messages: [{ role: 'system', content: 'a' }, { role: 'user', content: 'b' }, { role, content: 'c' }] }, 'messages[2].role');
  });

  it.each<[string, Record<string, unknown>]>([
    ['user without content', { role: 'user' }],
    ['user with null content', { role: 'user', content: null }],
    ['number content', { role: 'user', content: 5 }],
    ['object content', { role: 'user', content: { type: 'text', text: 'x' } }],
    ['assistant without tool calls or content', { role: 'assistant' }],
    ['tool without content', { role: 'tool', tool_call_id: 'c1' }],
    ['system without content', { role: 'system' }],
  ])('content: %s', (_name, message) => {
    expectBadRequest({ ...valid(), messages: [message] }, 'messages[0].content');
  });

  it.each<[string, unknown]>([['without type', { text: 'x' }], ['null', null], ['string', 'x'], ['numeric type', { type: 1 }]])('content part %s', (_name, part) => {
    expectBadRequest({ ...valid(), messages: [{ role: 'user', content: [{ type: 'text', text: 'ok' }, part] }] }, 'messages[0].content[1]');
  });

  it.each<[string, number, number, unknown[]]>([
    ['temperature', 0, 2, [-0.01, 2.01, '1', Number.POSITIVE_INFINITY, Number.NaN, true]],
    ['top_p', 0, 1, [-0.1, 1.01, '0.5']],
    ['presence_penalty', -2, 2, [-2.1, 2.5]],
    ['frequency_penalty', -2, 2, [-3, 2.01]],
  ])('%s outside %s..%s', (name, _min, _max, values) => {
    for (const value of values) expectBadRequest({ ...valid(), [name]: value }, name);
  });

  it.each<[string]>([['max_tokens'], ['max_completion_tokens'], ['n']])('%s must be a positive integer', (name) => {
    for (const value of [0, -1, 1.5, '10', Number.NaN, false]) expectBadRequest({ ...valid(), [name]: value }, name);
  });

  it('tools must be an array of typed objects', () => {
    expectBadRequest({ ...valid(), tools: 'x' }, 'tools');
    expectBadRequest({ ...valid(), tools: { type: 'function' } }, 'tools');
    expectBadRequest({ ...valid(), tools: [null] }, 'tools[0]');
    expectBadRequest({ ...valid(), tools: [{}] }, 'tools[0]');
  });

  it('function tools need a function name', () => {
    const good = { type: 'function', function: { name: 'lookup', parameters: {} } };
    expectBadRequest({ ...valid(), tools: [{ type: 'function' }] }, 'tools[0].function.name');
    expectBadRequest({ ...valid(), tools: [good, { type: 'function', function: { name: '' } }] }, 'tools[1].function.name');
    expectBadRequest({ ...valid(), tools: [good, good, { type: 'function', function: { name: 3 } }] }, 'tools[2].function.name');
    expectBadRequest({ ...valid(), tools: [{ type: 'function', function: 'lookup' }] }, 'tools[0].function.name');
  });

  it('stream must be a boolean', () => {
    for (const stream of ['true', 1, {}]) expectBadRequest({ ...valid(), stream }, 'stream');
  });

  it('stream_options must be an object', () => {
    for (const streamOptions of ['x', [], true, 1]) expectBadRequest({ ...valid(), stream: true, stream_options: streamOptions }, 'stream_options');
  });

  it('reports the first bad message', () => {
    expectBadRequest({ ...valid(), messages: [{ role: 'user', content: 'a' }, { role: 'user', content: 5 }, { role: 'x' }] }, 'messages[1].content');
  });
});

describe('validateOpenAIChatRequest: accepted requests', () => {
  it('returns the envelope with defaults', () => {
    expect(validateOpenAIChatRequest(valid())).toEqual({ model: 'gpt-4o-mini', stream: false, includeUsage: false, maxOutputTokens: null });
  });

  it('reads stream and include_usage', () => {
    expect(validateOpenAIChatRequest({ ...valid(), stream: true, stream_options: { include_usage: true } }))
      .toMatchObject({ stream: true, includeUsage: true });
    expect(validateOpenAIChatRequest({ ...valid(), stream: true })).toMatchObject({ stream: true, includeUsage: false });
    expect(validateOpenAIChatRequest({ ...valid(), stream: true, stream_options: { include_usage: 'true' } })).toMatchObject({ includeUsage: false });
    expect(validateOpenAIChatRequest({ ...valid(), stream: null, stream_options: null })).toMatchObject({ stream: false, includeUsage: false });
  });

  it('prefers max_completion_tokens over max_tokens', () => {
    expect(validateOpenAIChatRequest({ ...valid(), max_tokens: 100 }).maxOutputTokens).toBe(100);
    expect(validateOpenAIChatRequest({ ...valid(), max_completion_tokens: 50 }).maxOutputTokens).toBe(50);
    expect(validateOpenAIChatRequest({ ...valid(), max_tokens: 100, max_completion_tokens: 50 }).maxOutputTokens).toBe(50);
    expect(validateOpenAIChatRequest({ ...valid(), max_tokens: 100, max_completion_tokens: null }).maxOutputTokens).toBe(100);
  });

  it('accepts the numeric ranges inclusively and nulls', () => {
    for (const body of [
      { temperature: 0 }, { temperature: 2 }, { temperature: null }, { top_p: 0 }, { top_p: 1 }, { presence_penalty: -2 }, { frequency_penalty: 2 },
      { max_tokens: 1 }, { n: 1 }, { n: null },
    ]) {
      expect(() => validateOpenAIChatRequest({ ...valid(), ...body })).not.toThrow();
    }
  });

  it('lets assistant messages with tool_calls or function_call omit content', () => {
    const messages = [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'w', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      { role: 'assistant', content: null, function_call: { name: 'w', arguments: '{}' } },
    ];
    expect(() => validateOpenAIChatRequest({ ...valid(), messages })).not.toThrow();
  });

  it('accepts every standard role and content-part arrays', () => {
    const messages = ['system', 'developer', 'user', 'assistant', 'tool', 'function'].map((role) => ({ role, content: 'x' }));
    messages.push({ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'image_url', image_url: { url: 'data:' } }] } as never);
    expect(() => validateOpenAIChatRequest({ ...valid(), messages })).not.toThrow();
  });

  it('accepts non-function tools without a function and ignores unknown fields', () => {
    expect(() => validateOpenAIChatRequest({ ...valid(), tools: [{ type: 'web_search' }], tools_extra: 1, seed: 'anything', user: 5 })).not.toThrow();
    expect(() => validateOpenAIChatRequest({ ...valid(), tools: null })).not.toThrow();
  });
});
