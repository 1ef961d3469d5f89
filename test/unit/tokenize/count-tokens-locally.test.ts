import { describe, expect, it } from 'vitest';
import type { ChatRequest, ToolDefinition } from '../../../src/ir/chat-request.js';
import type { Message } from '../../../src/ir/message.js';
import { countTokensLocally, FILE_TOKENS, IMAGE_TOKENS, LOW_DETAIL_IMAGE_TOKENS } from '../../../src/tokenize/count-tokens-locally.js';

function request(system: string | null, messages: Message[], extra: Partial<ChatRequest> = {}): ChatRequest {
  return { model: 'm', system: system === null ? [] : [{ type: 'text', text: system }], messages, stream: false, extensions: {}, warnings: [], ...extra };
}

const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const assistant = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }] });
const emptyFunction = (name: string, description?: string): ToolDefinition => ({
  name, parameters: { type: 'object', properties: {} }, ...(description === undefined ? {} : { description }),
});

async function count(value: ChatRequest): Promise<number> {
  const result = await countTokensLocally(value);
  expect(result.source).toBe('local');
  return result.inputTokens;
}

// Known counts: OpenAI's API reference example (19 prompt tokens) and the API-verified cases of gpt-tokenizer's
// function-calling fixtures (from openai-chat-tokens), all for o200k_base models.
describe('countTokensLocally', () => {
  it('matches the API for plain chats', async () => {
    expect(await count(request('You are a helpful assistant.', [user('Hello!')]))).toBe(19);
    expect(await count(request(null, [user('hello')]))).toBe(8);
    expect(await count(request(null, [user('hello world')]))).toBe(9);
    expect(await count(request('hello', []))).toBe(8);
    expect(await count(request("# Important: you're the best robot", [user('hello robot'), assistant('hello world')]))).toBe(26);
    expect(await count(request(null, [user("This late pivot means we don't have time to boil the ocean for the client deliverable.")]))).toBe(25);
  });

  it('matches the API for tool definitions and tool choice', async () => {
    const hello = [user('hello')];
    expect(await count(request(null, hello, { tools: [emptyFunction('foo')] }))).toBe(31);
    expect(await count(request(null, hello, { tools: [emptyFunction('foo')], toolChoice: { kind: 'none' } }))).toBe(32);
    expect(await count(request(null, hello, { tools: [emptyFunction('foo')], toolChoice: { kind: 'auto' } }))).toBe(31);
    expect(await count(request(null, hello, { tools: [emptyFunction('foo')], toolChoice: { kind: 'tool', name: 'foo' } }))).toBe(36);
    expect(await count(request(null, hello, { tools: [emptyFunction('foo', 'Do a foo')] }))).toBe(35);
    const bingBong: ToolDefinition = {
      name: 'bing_bong',
      description: 'Do a bing bong',
      parameters: { type: 'object', properties: { foo: { type: 'string' }, bar: { type: 'number', description: 'A number' } } },
    };
    expect(await count(request(null, hello, { tools: [bingBong] }))).toBe(52);
    expect(await count(request('Hello', [user('Hi there')], { tools: [emptyFunction('do_stuff')] }))).toBe(36);
  });

  it('matches the API for tool calls and tool results', async () => {
    const call: Message = { role: 'assistant', content: [{ type: 'tool-call', id: 'c1', name: 'do_stuff', argumentsJson: '{"foo": "bar", "baz": 1.5}' }] };
    expect(await count(request(null, [call]))).toBe(27);
    const result: Message = { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'do_stuff', content: [{ type: 'text', text: '{}' }] }] };
    expect(await count(request(null, [user('hello world'), result]))).toBe(16);
  });

  it('charges the documented fixed costs for images and files', async () => {
    const base = await count(request(null, [user('look')]));
    const withImages: Message = {
      role: 'user',
      content: [
        { type: 'text', text: 'look' },
        { type: 'image', source: { kind: 'url', url: 'https://example.com/a.png' } },
        { type: 'image', source: { kind: 'url', url: 'https://example.com/b.png' }, detail: 'low' },
        { type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0=' } },
      ],
    };
    expect(await count(request(null, [withImages]))).toBe(base + IMAGE_TOKENS + LOW_DETAIL_IMAGE_TOKENS + FILE_TOKENS);
  });

  it('counts a JSON response schema and ignores reasoning from earlier turns', async () => {
    const base = await count(request(null, [user('hi')]));
    const schema = { type: 'object', properties: { answer: { type: 'string' } } };
    expect(await count(request(null, [user('hi')], { responseFormat: { kind: 'json-schema', schema } }))).toBeGreaterThan(base);
    const withReasoning = await count(request(null, [user('hi'), { role: 'assistant', content: [{ type: 'reasoning', text: 'long thoughts '.repeat(50) }, { type: 'text', text: 'ok' }] }]));
    expect(withReasoning).toBe(await count(request(null, [user('hi'), assistant('ok')])));
  });

  it('survives schemas the formatter cannot read and stays fast on pathological text', async () => {
    const odd: ToolDefinition = { name: 'odd', parameters: { type: 'object', properties: { x: { type: 'string', enum: 'not-an-array' } } } };
    expect(await count(request(null, [user('hi')], { tools: [odd] }))).toBeGreaterThan(8);
    const started = performance.now();
    const tokens = await count(request(null, [user('x'.repeat(200_000))]));
    expect(performance.now() - started).toBeLessThan(2000);
    expect(tokens).toBeGreaterThan(10_000);
  });
});
