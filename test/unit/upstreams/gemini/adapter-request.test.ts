import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../../../src/ir/chat-request.js';
import { DUMMY_THOUGHT_SIGNATURE } from '../../../../src/upstreams/gemini/build-contents.js';
import { GeminiAdapter } from '../../../../src/upstreams/gemini/gemini-adapter.js';
import type { UpstreamOperation } from '../../../../src/wire/wire.js';
import { THINKING_BUDGET_BY_EFFORT } from '../../../../src/upstreams/gemini/thinking-config.js';
import { chatRequest, geminiChannel, unusedTransport } from '../../gemini/gemini-test-support.js';

const adapter = new GeminiAdapter(unusedTransport);
const channel = geminiChannel();

function body(request: ChatRequest, model = 'gemini-2.5-flash', settings: Record<string, unknown> = {}): Record<string, unknown> {
  const built = adapter.buildChatRequest(geminiChannel({ settings }), 'key-1', request, model);
  return JSON.parse(String(built.body ?? 'null')) as Record<string, unknown>;
}

describe('GeminiAdapter URLs and headers', () => {
  it('builds generateContent / streamGenerateContent?alt=sse URLs with the key in x-goog-api-key', () => {
    const plain = adapter.buildChatRequest(channel, 'key-1', chatRequest(), 'gemini-2.5-flash');
    expect(plain.url).toBe('https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent');
    expect(plain.method).toBe('POST');
    expect(plain.headers).toMatchObject({ 'x-goog-api-key': 'key-1', 'content-type': 'application/json' });
    const stream = adapter.buildChatRequest(geminiChannel({ baseUrl: 'http://127.0.0.1:9/', settings: { api_version: 'v1' } }), 'k', chatRequest({ stream: true }), 'models/gemini-2.0-flash');
    expect(stream.url).toBe('http://127.0.0.1:9/v1/models/gemini-2.0-flash:streamGenerateContent?alt=sse');
    const versioned = adapter.passThrough.build(geminiChannel({ baseUrl: 'https://proxy.example/v1beta' }), 'k', { kind: 'chat', stream: false }, 'tunedModels/abc', '{}');
    expect(versioned.url).toBe('https://proxy.example/v1beta/tunedModels/abc:generateContent');
  });

  it('routes pass-through operations and retargets the model inside batch embedding and countTokens bodies', () => {
    const at = (operation: UpstreamOperation, requestBody = '{"contents":[]}') =>
      adapter.passThrough.build(channel, 'k', operation, 'gemini-embedding-001', requestBody);
    expect(at({ kind: 'chat', stream: true }).url).toMatch(/:streamGenerateContent\?alt=sse$/);
    expect(at({ kind: 'count-tokens' }).url).toMatch(/:countTokens$/);
    expect(at({ kind: 'embeddings', batch: false }).url).toMatch(/:embedContent$/);
    const chatBody = '{"contents":[{"parts":[{"text":"x"}]}],"model":"public"}';
    expect(at({ kind: 'chat', stream: false }, chatBody).body).toBe(chatBody);
    const batch = at({ kind: 'embeddings', batch: true }, JSON.stringify({ requests: [{ model: 'models/public', content: { parts: [{ text: 'a' }] } }] }));
    expect(batch.url).toMatch(/:batchEmbedContents$/);
    expect(JSON.parse(String(batch.body ?? ''))).toEqual({ requests: [{ content: { parts: [{ text: 'a' }] }, model: 'models/gemini-embedding-001' }] });
    const count = at({ kind: 'count-tokens' }, JSON.stringify({ generate_content_request: { model: 'models/public', contents: [] } }));
    expect(JSON.parse(String(count.body ?? ''))).toEqual({ generate_content_request: { contents: [], model: 'models/gemini-embedding-001' } });
  });
});

describe('GeminiAdapter.buildChatRequest', () => {
  it('maps roles, merges turns, drops empty text, and sends signatures back on their parts', () => {
    const request = chatRequest({
      system: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: '' }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }, { type: 'text', text: '' }] },
        { role: 'user', content: [{ type: 'image', source: { kind: 'url', url: 'data:image/png;base64,iVBOR' } }] },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'Let me check.', signature: 'sig-thought' },
            { type: 'text', text: '' },
            { type: 'tool-call', id: 'call_1', name: 'get_weather', argumentsJson: '{"location":"Paris"}', signature: 'sig-call' },
          ],
        },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'get_weather', content: [{ type: 'text', text: 'sunny' }] }] },
        { role: 'user', content: [{ type: 'text', text: 'Thanks', cacheControl: { type: 'ephemeral' } }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Welcome', signature: 'sig-text' }] },
      ],
    });
    const sent = body(request);
    expect(sent.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }] });
    expect(sent.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather?' }, { inlineData: { mimeType: 'image/png', data: 'iVBOR' } }] },
      {
        role: 'model',
        parts: [
          { text: 'Let me check.', thought: true, thoughtSignature: 'sig-thought' },
          { functionCall: { id: 'call_1', name: 'get_weather', args: { location: 'Paris' } }, thoughtSignature: 'sig-call' },
        ],
      },
      { role: 'user', parts: [{ functionResponse: { id: 'call_1', name: 'get_weather', response: { output: 'sunny' } } }, { text: 'Thanks' }] },
      { role: 'model', parts: [{ text: 'Welcome', thoughtSignature: 'sig-text' }] },
    ]);
  });

  it('wraps tool results so that response is always an object', () => {
    const result = (text: string, isError?: boolean): unknown => {
      const sent = body(
        chatRequest({
          messages: [
            { role: 'assistant', content: [{ type: 'tool-call', id: 'c', name: 'f', argumentsJson: '{}' }] },
            { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c', toolName: 'f', content: [{ type: 'text', text }], ...(isError ? { isError } : {}) }] },
          ],
        }),
      );
      return (sent.contents as Array<{ parts: Array<{ functionResponse?: { response: unknown } }> }>)[1]?.parts[0]?.functionResponse?.response;
    };
    expect(result('{"temp": 20}')).toEqual({ temp: 20 });
    // JSON's own whitespace may stand before the object; other leading text is not JSON.
    expect(result(' \r\n\t{"temp": 21}\n')).toEqual({ temp: 21 });
    expect(result('\u00a0{"temp": 22}')).toEqual({ output: '\u00a0{"temp": 22}' });
    expect(result('{not json')).toEqual({ output: '{not json' });
    expect(result('[1,2]')).toEqual({ output: '[1,2]' });
    expect(result('42')).toEqual({ output: '42' });
    expect(result('{"output": "x"}')).toEqual({ output: { output: 'x' } });
    expect(result('not found', true)).toEqual({ error: 'not found' });
  });

  it('maps generation settings, clamping what Gemini cannot take, with warnings', () => {
    const request = chatRequest({
      temperature: 2,
      topP: 0.9,
      topK: 20,
      maxOutputTokens: 512,
      seed: 7,
      presencePenalty: 0,
      frequencyPenalty: 0.5,
      stopSequences: ['a', 'b', 'c', 'd', 'e', 'f', 'g'],
      responseFormat: { kind: 'json' },
      parallelToolCalls: false,
      user: 'end-user-1',
    });
    const sent = body(request);
    expect(sent.generationConfig).toEqual({
      temperature: 2,
      topP: 0.9,
      topK: 20,
      maxOutputTokens: 512,
      stopSequences: ['a', 'b', 'c', 'd', 'e'],
      seed: 7,
      frequencyPenalty: 0.5,
      responseMimeType: 'application/json',
    });
    expect(request.warnings.join('\n')).toMatch(/at most 5 stop sequences/);
    expect(request.warnings.join('\n')).toMatch(/parallel_tool_calls/);
    expect(request.warnings.join('\n')).toMatch(/end-user id/);
  });

  it('maps reasoning to thinkingConfig: a budget as is, an effort as a budget (2.x) or a level (3+)', () => {
    expect((body(chatRequest({ reasoning: { budgetTokens: 0 } })).generationConfig as Record<string, unknown>).thinkingConfig).toEqual({ thinkingBudget: 0 });
    expect((body(chatRequest({ reasoning: { effort: 'medium', includeThoughts: true } })).generationConfig as Record<string, unknown>).thinkingConfig).toEqual({
      thinkingBudget: THINKING_BUDGET_BY_EFFORT.medium,
      includeThoughts: true,
    });
    expect((body(chatRequest({ reasoning: { effort: 'high' } }), 'gemini-3-pro-preview').generationConfig as Record<string, unknown>).thinkingConfig).toEqual({
      thinkingLevel: 'HIGH',
    });
  });

  it('declares tools with cleaned schemas and maps the tool choice', () => {
    const request = chatRequest({
      tools: [
        {
          name: 'lookup',
          description: 'Look up',
          strict: true,
          parameters: {
            $schema: 'http://json-schema.org/draft-07/schema#',
            type: 'object',
            properties: { id: { type: ['string', 'null'], format: 'uuid' }, kind: { const: 'user' } },
            required: ['id'],
            additionalProperties: false,
          },
        },
        { name: 'ping', parameters: { type: 'object', properties: {} } },
      ],
      toolChoice: { kind: 'tool', name: 'lookup' },
    });
    const sent = body(request);
    expect(sent.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'lookup',
            description: 'Look up',
            parameters: { type: 'object', properties: { id: { type: 'string', nullable: true }, kind: { enum: ['user'], type: 'string' } }, required: ['id'] },
          },
          { name: 'ping' },
        ],
      },
    ]);
    expect(sent.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['lookup'] } });
    expect(request.warnings.join('\n')).toContain('$schema, additionalProperties, format:uuid');
    const raw = body(chatRequest({ tools: [{ name: 'x', parameters: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false } }] }), 'gemini-2.5-flash', {
      schema_mode: 'json-schema',
    });
    expect(raw.tools).toEqual([{ functionDeclarations: [{ name: 'x', parametersJsonSchema: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false } }] }]);
    expect(body(chatRequest({ toolChoice: { kind: 'required' } })).toolConfig).toBeUndefined();
  });

  it('puts the placeholder signature on unsigned function calls for Gemini 3 only', () => {
    const request = (): ChatRequest =>
      chatRequest({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'go' }] },
          { role: 'assistant', content: [{ type: 'tool-call', id: 'a', name: 'f', argumentsJson: '{}' }, { type: 'tool-call', id: 'b', name: 'f', argumentsJson: '{}' }] },
          { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'a', toolName: 'f', content: [{ type: 'text', text: '1' }] }, { type: 'tool-result', toolCallId: 'b', toolName: 'f', content: [{ type: 'text', text: '2' }] }] },
        ],
      });
    const parts = (sent: Record<string, unknown>) => (sent.contents as Array<{ parts: Array<{ thoughtSignature?: string }> }>)[1]?.parts;
    expect(parts(body(request(), 'gemini-3-pro-preview'))?.map((part) => part.thoughtSignature)).toEqual([DUMMY_THOUGHT_SIGNATURE, undefined]);
    expect(parts(body(request(), 'gemini-2.5-flash'))?.map((part) => part.thoughtSignature)).toEqual([undefined, undefined]);
  });
});

describe('GeminiAdapter count tokens and embeddings', () => {
  it('counts bare contents, or the whole request once a system instruction or tools count', () => {
    const bare = adapter.countTokens.build(channel, 'k', chatRequest({ temperature: 1 }), 'gemini-2.5-flash');
    expect(bare.url).toMatch(/\/v1beta\/models\/gemini-2\.5-flash:countTokens$/);
    expect(JSON.parse(String(bare.body ?? ''))).toEqual({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
    const full = adapter.countTokens.build(channel, 'k', chatRequest({ system: [{ type: 'text', text: 'sys' }] }), 'gemini-2.5-flash');
    expect(JSON.parse(String(full.body ?? ''))).toEqual({
      generateContentRequest: { model: 'models/gemini-2.5-flash', contents: [{ role: 'user', parts: [{ text: 'hi' }] }], systemInstruction: { parts: [{ text: 'sys' }] } },
    });
    expect(adapter.countTokens.parse(Buffer.from('{"totalTokens": 31}'))).toBe(31);
    expect(adapter.countTokens.parse(Buffer.from('{}'))).toBe(0);
  });

  it('embeds one input with embedContent and several with batchEmbedContents', () => {
    const one = adapter.embeddings.build(channel, 'k', { model: 'e', inputs: ['a'], dimensions: 64, taskType: 'RETRIEVAL_QUERY', warnings: [] }, 'gemini-embedding-001');
    expect(one.url).toMatch(/:embedContent$/);
    expect(JSON.parse(String(one.body ?? ''))).toEqual({ content: { parts: [{ text: 'a' }] }, taskType: 'RETRIEVAL_QUERY', outputDimensionality: 64 });
    const many = adapter.embeddings.build(channel, 'k', { model: 'e', inputs: ['a', 'b'], warnings: [] }, 'gemini-embedding-001');
    expect(many.url).toMatch(/:batchEmbedContents$/);
    expect(JSON.parse(String(many.body ?? ''))).toEqual({
      requests: [
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'a' }] } },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'b' }] } },
      ],
    });
    const parsed = adapter.embeddings.parse(Buffer.from('{"embeddings":[{"values":[0.1,0.2]},{"values":[0.3,0.4]}]}'), { model: 'e', inputs: ['abcd', 'abcdefgh'], warnings: [] });
    expect(parsed).toEqual({ model: 'e', vectors: [[0.1, 0.2], [0.3, 0.4]], inputTokens: 3 });
    expect(adapter.embeddings.parse(Buffer.from('{"embedding":{"values":[1]}}'), { model: 'e', inputs: ['x'], warnings: [] }).vectors).toEqual([[1]]);
    expect(() => adapter.embeddings.build(channel, 'k', { model: 'e', inputs: [''], warnings: [] }, 'm')).toThrow(/empty/);
  });
});

describe('GeminiAdapter edge cases', () => {
  it('sends a system-only request as the user turn and ignores empty stop sequences', () => {
    const request = chatRequest({ system: [{ type: 'text', text: 'Say hi.' }], messages: [], stopSequences: ['', 'END'] });
    const sent = body(request);
    expect(sent.contents).toEqual([{ role: 'user', parts: [{ text: 'Say hi.' }] }]);
    expect(sent.systemInstruction).toBeUndefined();
    expect(sent.generationConfig).toEqual({ stopSequences: ['END'] });
    expect(request.warnings.join('\n')).toContain('only a system prompt');
  });
});
