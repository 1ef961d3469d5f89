import { describe, expect, it } from 'vitest';
import { geminiCodec } from '../../../../src/codecs/gemini/index.js';
import { decodeGeminiCountTokensRequest } from '../../../../src/codecs/gemini/count-tokens.js';
import { GatewayError } from '../../../../src/errors/gateway-error.js';
import { fixtureJson } from '../../gemini/gemini-test-support.js';

const decode = (body: Record<string, unknown>, stream = false) => geminiCodec.decodeRequest(body, { pathModel: 'models/gemini-2.5-flash', stream });

function badRequest(body: Record<string, unknown>): GatewayError {
  try {
    decode(body);
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).status).toBe(400);
    return error as GatewayError;
  }
  throw new Error('expected a 400');
}

describe('geminiCodec.decodeRequest', () => {
  it('decodes a full request fixture (snake_case and camelCase mixed) into the canonical form', () => {
    const request = decode(fixtureJson('generate-content-request.json'), true);
    expect(request.model).toBe('gemini-2.5-flash');
    expect(request.stream).toBe(true);
    expect(request.system).toEqual([
      { type: 'text', text: 'You are a weather assistant.' },
      { type: 'text', text: 'Answer in one sentence.' },
    ]);
    const [question, call, results, answer, followUp] = request.messages;
    expect(question).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'What is the weather in Tokyo and in Oslo?' },
        { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
      ],
    });
    expect(call?.role).toBe('assistant');
    expect(call?.content[0]).toEqual({ type: 'reasoning', text: '**Checking the tools**\nI should call get_weather twice.' });
    const [tokyo, oslo] = call?.content.slice(1) ?? [];
    expect(tokyo).toMatchObject({ type: 'tool-call', name: 'get_weather', argumentsJson: '{"location":"Tokyo"}', signature: 'CikBcsjafFK168IbtVtoxVV0' });
    expect(oslo).toMatchObject({ type: 'tool-call', name: 'get_weather', argumentsJson: '{"location":"Oslo"}' });
    expect(oslo).not.toHaveProperty('signature');
    // Function calls without ids get generated ones, and responses take them in order, by name.
    expect(tokyo?.type === 'tool-call' && tokyo.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(results).toEqual({
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: tokyo?.type === 'tool-call' ? tokyo.id : '', toolName: 'get_weather', content: [{ type: 'text', text: '18°C, clear' }] },
        { type: 'tool-result', toolCallId: oslo?.type === 'tool-call' ? oslo.id : '', toolName: 'get_weather', content: [{ type: 'text', text: '{"temperature":4,"sky":"snow"}' }] },
      ],
    });
    expect(answer).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Tokyo is clear at 18°C; Oslo has snow at 4°C.' },
        { type: 'text', text: '', signature: 'EqMDCqADARFNMg9Z' },
      ],
    });
    expect(followUp?.content[1]).toEqual({
      type: 'file',
      source: { kind: 'url', url: 'https://generativelanguage.googleapis.com/v1beta/files/abc123', mediaType: 'application/pdf' },
    });
    expect(request).toMatchObject({ temperature: 0.7, topP: 0.95, topK: 40, maxOutputTokens: 1024, stopSequences: ['END'], seed: 42 });
    expect(request.reasoning).toEqual({ budgetTokens: 2048, includeThoughts: true });
    expect(request.toolChoice).toEqual({ kind: 'tool', name: 'get_weather' });
    expect(request.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Current weather of a city',
        parameters: {
          type: 'object',
          properties: { location: { type: 'string' }, unit: { type: ['string', 'null'], enum: ['celsius', 'fahrenheit'] } },
          required: ['location'],
        },
      },
    ]);
    expect(Object.keys(request.extensions).sort()).toEqual(['generationConfig.responseModalities', 'safetySettings']);
    // Google Search grounding maps to the canonical web search, for every family's equivalent.
    expect(request.hostedTools).toEqual([{ kind: 'web-search' }]);
  });

  it('matches function responses to calls by id first', () => {
    const request = decode({
      contents: [
        { role: 'user', parts: [{ text: 'go' }] },
        { role: 'model', parts: [{ functionCall: { id: 'a', name: 'f', args: {} } }, { functionCall: { id: 'b', name: 'f', args: {} } }] },
        { role: 'user', parts: [{ functionResponse: { id: 'b', name: 'f', response: { error: 'boom' } } }, { functionResponse: { name: 'f', response: {} } }] },
      ],
    });
    expect(request.messages[2]?.content).toEqual([
      { type: 'tool-result', toolCallId: 'b', toolName: 'f', content: [{ type: 'text', text: 'boom' }], isError: true },
      { type: 'tool-result', toolCallId: 'a', toolName: 'f', content: [{ type: 'text', text: '{}' }] },
    ]);
  });

  it('maps tool config modes, response formats and thinking levels', () => {
    const base = { contents: [{ parts: [{ text: 'x' }] }] };
    expect(decode({ ...base, toolConfig: { functionCallingConfig: { mode: 'NONE' } } }).toolChoice).toEqual({ kind: 'none' });
    expect(decode({ ...base, toolConfig: { functionCallingConfig: { mode: 'ANY' } } }).toolChoice).toEqual({ kind: 'required' });
    expect(decode({ ...base, toolConfig: { function_calling_config: { mode: 'AUTO' } } }).toolChoice).toEqual({ kind: 'auto' });
    expect(decode({ ...base, generationConfig: { responseMimeType: 'application/json' } }).responseFormat).toEqual({ kind: 'json' });
    expect(decode({ ...base, generationConfig: { responseMimeType: 'application/json', responseJsonSchema: { type: 'object' } } }).responseFormat).toEqual({
      kind: 'json-schema',
      schema: { type: 'object' },
    });
    expect(decode({ ...base, generationConfig: { thinkingConfig: { thinkingLevel: 'low', thinkingBudget: -1 } } }).reasoning).toEqual({ effort: 'low' });
    const many = decode({ ...base, generationConfig: { candidateCount: 3 } });
    expect(many.extensions['generationConfig.candidateCount']).toBe(3);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['missing contents', {}, 'contents'],
    ['empty contents', { contents: [] }, 'contents'],
    ['a bad role', { contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] }, 'contents[0].role'],
    ['empty parts', { contents: [{ role: 'user', parts: [] }] }, 'contents[0].parts'],
    ['an empty text part', { contents: [{ role: 'user', parts: [{ text: 'a' }, { text: '' }] }] }, 'contents[0].parts[1]'],
    ['two kinds of data in one part', { contents: [{ parts: [{ text: 'a', inlineData: { mimeType: 'image/png', data: 'AA==' } }] }] }, 'contents[0].parts[0]'],
    ['a function call in a user turn', { contents: [{ parts: [{ functionCall: { name: 'f', args: {} } }] }] }, 'contents[0].parts[0].functionCall'],
    ['temperature above 2', { contents: [{ parts: [{ text: 'x' }] }], generationConfig: { temperature: 2.1 } }, 'generationConfig.temperature'],
    ['topP above 1', { contents: [{ parts: [{ text: 'x' }] }], generationConfig: { topP: 1.5 } }, 'generationConfig.topP'],
    ['maxOutputTokens 0', { contents: [{ parts: [{ text: 'x' }] }], generationConfig: { maxOutputTokens: 0 } }, 'generationConfig.maxOutputTokens'],
    ['six stop sequences', { contents: [{ parts: [{ text: 'x' }] }], generationConfig: { stopSequences: ['a', 'b', 'c', 'd', 'e', 'f'] } }, 'generationConfig.stopSequences'],
    ['a bad function name', { contents: [{ parts: [{ text: 'x' }] }], tools: [{ functionDeclarations: [{ name: '1bad name' }] }] }, 'tools[0].functionDeclarations[0].name'],
    ['a bad mode', { contents: [{ parts: [{ text: 'x' }] }], toolConfig: { functionCallingConfig: { mode: 'SOMETIMES' } } }, 'toolConfig.functionCallingConfig.mode'],
    ['a bad thinking level', { contents: [{ parts: [{ text: 'x' }] }], generationConfig: { thinkingConfig: { thinkingLevel: 'EXTREME' } } }, 'generationConfig.thinkingConfig.thinkingLevel'],
  ])('rejects %s with a 400 naming the field', (_name, body, param) => {
    expect(badRequest(body).param).toBe(param);
  });

  it('keeps signature-only parts: an empty text, or an empty thought, as Gemini streams end with them', () => {
    const request = decode({
      contents: [
        { parts: [{ text: 'x' }] },
        { role: 'model', parts: [{ text: 'answer' }, { text: '', thoughtSignature: 'c2ln' }, { text: '', thought: true, thoughtSignature: 'dGg=' }] },
      ],
    });
    expect(request.messages[1]?.content).toEqual([
      { type: 'text', text: 'answer' },
      { type: 'text', text: '', signature: 'c2ln' },
      { type: 'reasoning', text: '', signature: 'dGg=' },
    ]);
  });

  it('requires the model from the URL', () => {
    expect(() => geminiCodec.decodeRequest({ contents: [{ parts: [{ text: 'x' }] }] }, {})).toThrow(GatewayError);
  });

  it('decodes countTokens bodies in both forms', () => {
    const bare = decodeGeminiCountTokensRequest({ contents: [{ parts: [{ text: 'count me' }] }] }, { pathModel: 'gemini-2.5-flash' });
    expect(bare.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'count me' }] }]);
    const nested = decodeGeminiCountTokensRequest(
      { generateContentRequest: { model: 'models/gemini-2.5-flash', contents: [{ parts: [{ text: 'x' }] }], systemInstruction: { parts: [{ text: 'sys' }] } } },
      { pathModel: 'gemini-2.5-flash' },
    );
    expect(nested.system).toEqual([{ type: 'text', text: 'sys' }]);
    expect(() => decodeGeminiCountTokensRequest({ contents: [], generateContentRequest: {} }, { pathModel: 'm' })).toThrow(GatewayError);
  });
});
