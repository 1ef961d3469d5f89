import { describe, expect, it } from 'vitest';
import { usageFromOpenAI } from '../../../../src/wire/openai/usage.js';
import fc from 'fast-check';
import { DELTA, FINISH, markersOf, OpenAIStreamUsageObserver, USAGE_OBJECT } from '../../../../src/codecs/openai-chat/stream-usage-observer.js';

const sse = (chunk: unknown, eol = '\n'): Buffer => Buffer.from(`data: ${JSON.stringify(chunk)}${eol}${eol}`, 'utf8');
const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini' };
const delta = (content: string): Buffer => sse({ ...base, choices: [{ index: 0, delta: { content }, finish_reason: null }] });
const usage = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18, prompt_tokens_details: { cached_tokens: 3 }, completion_tokens_details: { reasoning_tokens: 2 } };
const usageOnly = sse({ ...base, choices: [], usage });

describe('OpenAIStreamUsageObserver', () => {
  it('captures the usage chunk and drops it when the client did not ask for usage', () => {
    const observer = new OpenAIStreamUsageObserver(false);
    expect(observer.observe(usageOnly)).toBe(false);
    expect(observer.usage).toEqual(usageFromOpenAI(usage));
  });

  it('captures and forwards the usage chunk when the client asked for it', () => {
    const observer = new OpenAIStreamUsageObserver(true);
    expect(observer.observe(usageOnly)).toBe(true);
    expect(observer.usage).toEqual(usageFromOpenAI(usage));
  });

  it('recognises the spaced "usage": { form and CRLF framing', () => {
    const observer = new OpenAIStreamUsageObserver(false);
    const event = Buffer.from('data: {"choices": [], "usage": {"prompt_tokens": 4, "completion_tokens": 6}}\r\n\r\n');
    expect(observer.observe(event)).toBe(false);
    expect(observer.usage?.input.total).toBe(4);
    expect(observer.usage?.output.total).toBe(6);
  });

  it('forwards a usage object that rides on a chunk with choices, even if the client did not ask', () => {
    const observer = new OpenAIStreamUsageObserver(false);
    const event = sse({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage });
    expect(observer.observe(event)).toBe(true);
    expect(observer.usage).toEqual(usageFromOpenAI(usage));
  });

  it('forwards "usage": null chunks and keeps counting their deltas', () => {
    const observer = new OpenAIStreamUsageObserver(false);
    const event = sse({ ...base, choices: [{ index: 0, delta: { content: 'x' }, finish_reason: null }], usage: null });
    expect(observer.observe(event)).toBe(true);
    expect(observer.usage).toBeNull();
    expect(observer.deltaEvents).toBe(1);
  });

  it('keeps the last good usage when a later usage event is not JSON, and forwards it', () => {
    const observer = new OpenAIStreamUsageObserver(false);
    observer.observe(usageOnly);
    const broken = Buffer.from('data: {"choices":[],"usage":{ not json\n\n');
    expect(observer.observe(broken)).toBe(true);
    expect(observer.usage).toEqual(usageFromOpenAI(usage));
  });

  it('takes the newest usage when several arrive', () => {
    const observer = new OpenAIStreamUsageObserver(true);
    observer.observe(sse({ ...base, choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } }));
    observer.observe(sse({ ...base, choices: [], usage: { prompt_tokens: 2, completion_tokens: 9 } }));
    expect(observer.usage?.output.total).toBe(9);
  });

  it('reads a usage chunk split over several data lines', () => {
    const observer = new OpenAIStreamUsageObserver(false);
    const event = Buffer.from('data: {"choices":[],\ndata: "usage":{"prompt_tokens":8,"completion_tokens":1}}\n\n');
    expect(observer.observe(event)).toBe(false);
    expect(observer.usage?.input.total).toBe(8);
  });

  it('counts delta events and forwards them, [DONE] and comments untouched', () => {
    const observer = new OpenAIStreamUsageObserver(false);
    const events = [
      sse({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }),
      delta('Hel'),
      delta('lo'),
      sse({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
      usageOnly,
      Buffer.from(': keep-alive\n\n'),
      Buffer.from('data: [DONE]\n\n'),
    ];
    const forwarded = events.filter((event) => observer.observe(event));
    expect(observer.deltaEvents).toBe(4);
    expect(forwarded).toHaveLength(events.length - 1);
    expect(forwarded).not.toContain(usageOnly);
    expect(observer.usage?.input.total).toBe(11);
  });

  it('is not fooled by content that mentions "usage":{', () => {
    const observer = new OpenAIStreamUsageObserver(false);
    expect(observer.observe(delta('he wrote "usage":{"prompt_tokens":999} and "usage": {}'))).toBe(true);
    expect(observer.usage).toBeNull();
    expect(observer.deltaEvents).toBe(1);
  });
});

describe('the opening of a pass-through stream', () => {
  it('OpenAI: the role chunk is preamble; text, tool calls and finishes are content; an error event reads as its status', async () => {
    const { openAIChatCodec } = await import('../../../../src/codecs/openai-chat/index.js');
    const observer = openAIChatCodec.passThrough.createObserver();
    expect(observer.opening(sse({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }))).toEqual({ kind: 'preamble' });
    expect(observer.opening(delta('Hi'))).toEqual({ kind: 'content' });
    expect(observer.opening(sse({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'c', type: 'function', function: { name: 'f', arguments: '' } }] }, finish_reason: null }] }))).toEqual({ kind: 'content' });
    expect(observer.opening(sse({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }))).toEqual({ kind: 'content' });
    expect(observer.opening(sse({ error: { message: 'The server had an error', type: 'server_error', code: null } }))).toEqual({ kind: 'error', status: 502 });
    expect(observer.opening(sse({ error: { message: 'Slow down', type: 'rate_limit_error', code: 'rate_limit_exceeded' } }))).toEqual({ kind: 'error', status: 429 });
    expect(observer.opening(sse({ error: { message: 'Too long', type: 'invalid_request_error', code: 'context_length_exceeded' } }))).toEqual({ kind: 'error', status: 400 });
  });

  it('OpenAI: the delivered text covers content, reasoning and tool calls, and nothing of the usage chunk', async () => {
    const { openAIChatCodec } = await import('../../../../src/codecs/openai-chat/index.js');
    const observer = openAIChatCodec.passThrough.createObserver();
    observer.observe(delta('Hel'));
    observer.observe(sse({ ...base, choices: [{ index: 0, delta: { reasoning_content: 'think' }, finish_reason: null }] }));
    observer.observe(sse({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { name: 'lookup', arguments: '{"q":' } }] }, finish_reason: null }] }));
    expect([...observer.takeDeliveredText()].join('')).toBe('Helthinklookup{"q":');
    expect(observer.usageIsFinal()).toBe(false);
    observer.observe(usageOnly);
    expect(observer.usageIsFinal()).toBe(true);
  });

  it('Gemini: an error object is an error with its code; candidates are content', async () => {
    const { geminiCodec } = await import('../../../../src/codecs/gemini/index.js');
    const observer = geminiCodec.passThrough.createObserver();
    expect(observer.opening(Buffer.from('data: {"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}\r\n\r\n'))).toEqual({ kind: 'error', status: 503 });
    expect(observer.opening(Buffer.from('data: {"candidates":[{"content":{"parts":[{"text":"the error was"}]}}]}\r\n\r\n'))).toEqual({ kind: 'content' });
    observer.observe(Buffer.from('data: {"candidates":[{"content":{"parts":[{"text":"a "},{"functionCall":{"name":"f","args":{"x":1}}}]}}]}\r\n\r\n'));
    expect([...observer.takeDeliveredText()].join('')).toBe('a f{"x":1}');
  });
});

describe('markersOf', () => {
  /** The markers as separate searches, one per needle: what the one-pass scan must agree with. */
  const bySearch = (event: Buffer): number =>
    (['"usage":{', '"usage": {'].some((needle) => event.includes(needle)) ? USAGE_OBJECT : 0)
    | (event.includes('"delta"') ? DELTA : 0)
    | (['"finish_reason":"', '"finish_reason": "', 'data: [DONE]'].some((needle) => event.includes(needle)) ? FINISH : 0);

  it('finds exactly what a search per marker finds, also where markers touch or overlap', () => {
    const pieces = ['"usage":{', '"usage": {', '"usage":null', '"delta"', '"delta', 'delta"', '"finish_reason":"', '"finish_reason": "', '"finish_reason":null',
      'data: [DONE]', 'data: [DONE', '"', ':', ' ', '{', '}', 'stop"', 'é', 'x'];
    fc.assert(fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 12 }), (parts) => {
      const event = Buffer.from(parts.join(''), 'utf8');
      expect(markersOf(event)).toBe(bySearch(event));
    }), { numRuns: 2000 });
    expect(markersOf(Buffer.from('data: {"finish_reason":"delta"}'))).toBe(DELTA | FINISH);
  });
});
