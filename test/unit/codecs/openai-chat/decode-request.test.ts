import { describe, expect, it } from 'vitest';
import { decodeOpenAIChatRequest } from '../../../../src/codecs/openai-chat/decode-request.js';
import { GatewayError } from '../../../../src/errors/gateway-error.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

function rejects(body: Record<string, unknown>, param: string): GatewayError {
  try {
    decodeOpenAIChatRequest(body);
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    const failure = error as GatewayError;
    expect(failure.status).toBe(400);
    expect(failure.param).toBe(param);
    return failure;
  }
  throw new Error('expected a 400');
}

describe('decodeOpenAIChatRequest', () => {
  it('decodes a full conversation with vision, files, audio, tool calls and tool results', () => {
    const request = decodeOpenAIChatRequest({
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Use metric units.' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in these?' },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'low' } },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
            { type: 'file', file: { filename: 'report.pdf', file_data: 'data:application/pdf;base64,JVBERi0xLjQ=' } },
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18°C' },
        { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '14:00' }] },
        { role: 'assistant', content: 'Sunny and 18°C.' },
      ],
    });
    expect(request.system).toEqual([{ type: 'text', text: 'Be brief.' }, { type: 'text', text: 'Use metric units.' }]);
    expect(request.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.jpg' }, detail: 'low' },
          { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: PNG } },
          { type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0xLjQ=' }, filename: 'report.pdf' },
          { type: 'file', source: { kind: 'base64', mediaType: 'audio/wav', data: 'UklGRg==' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', id: 'call_1', name: 'get_weather', argumentsJson: '{"city":"Paris"}' },
          { type: 'tool-call', id: 'call_2', name: 'get_time', argumentsJson: '{}' },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'call_1', toolName: 'get_weather', content: [{ type: 'text', text: '18°C' }] },
          { type: 'tool-result', toolCallId: 'call_2', toolName: 'get_time', content: [{ type: 'text', text: '14:00' }] },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'Sunny and 18°C.' }] },
    ]);
    expect(request.warnings).toEqual([]);
    expect(request.extensions).toEqual({});
  });

  it('maps every standard parameter', () => {
    const request = decodeOpenAIChatRequest({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 100,
      max_completion_tokens: 50,
      temperature: 0.3,
      top_p: 0.9,
      stop: 'END',
      seed: 7,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      tools: [{ type: 'function', function: { name: 'lookup', description: 'Looks up', parameters: { type: 'object', properties: { q: { type: 'string' } } }, strict: true } }],
      tool_choice: { type: 'function', function: { name: 'lookup' } },
      parallel_tool_calls: false,
      response_format: { type: 'json_schema', json_schema: { name: 'answer', description: 'An answer', schema: { type: 'object' }, strict: true } },
      reasoning_effort: 'low',
      user: 'user-42',
      n: 1,
    });
    expect(request).toMatchObject({
      model: 'gpt-4o',
      stream: true,
      maxOutputTokens: 50,
      temperature: 0.3,
      topP: 0.9,
      stopSequences: ['END'],
      seed: 7,
      presencePenalty: 0.5,
      frequencyPenalty: -0.5,
      tools: [{ name: 'lookup', description: 'Looks up', parameters: { type: 'object', properties: { q: { type: 'string' } } }, strict: true }],
      toolChoice: { kind: 'tool', name: 'lookup' },
      parallelToolCalls: false,
      responseFormat: { kind: 'json-schema', name: 'answer', description: 'An answer', schema: { type: 'object' }, strict: true },
      reasoning: { effort: 'low' },
      user: 'user-42',
    });
    expect(request.warnings).toEqual([]);
    expect(decodeOpenAIChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], max_tokens: 9, stop: ['a', 'b'] })).toMatchObject({ maxOutputTokens: 9, stopSequences: ['a', 'b'] });
    expect(decodeOpenAIChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_object' } }).responseFormat).toEqual({ kind: 'json' });
    expect(decodeOpenAIChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], tool_choice: 'required' }).toolChoice).toEqual({ kind: 'required' });
  });

  it('keeps unmapped fields in extensions and says so in warnings', () => {
    const request = decodeOpenAIChatRequest({
      model: 'gpt-4o', messages: [{ role: 'user', content: 'x', name: 'alice' }], logit_bias: { '50256': -100 }, logprobs: true, metadata: { a: 'b' }, store: null,
    });
    expect(request.extensions).toEqual({ logit_bias: { '50256': -100 }, logprobs: true, metadata: { a: 'b' } });
    expect(request.warnings).toEqual([
      "'messages[].name' is not translated for this model and was ignored.",
      "'logit_bias' is not translated for this model and was ignored.",
      "'logprobs' is not translated for this model and was ignored.",
      "'metadata' is not translated for this model and was ignored.",
    ]);
  });

  it('maps reasoning_effort none to a zero thinking budget and clamps xhigh to high', () => {
    const base = { model: 'gpt-5', messages: [{ role: 'user', content: 'x' }] };
    expect(decodeOpenAIChatRequest({ ...base, reasoning_effort: 'none' }).reasoning).toEqual({ budgetTokens: 0 });
    const clamped = decodeOpenAIChatRequest({ ...base, reasoning_effort: 'xhigh' });
    expect(clamped.reasoning).toEqual({ effort: 'high' });
    expect(clamped.warnings).toHaveLength(1);
    rejects({ ...base, reasoning_effort: 'extreme' }, 'reasoning_effort');
  });

  it('reads deprecated functions, function_call and function messages as tools', () => {
    const request = decodeOpenAIChatRequest({
      model: 'gpt-3.5-turbo',
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: null, function_call: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
        { role: 'function', name: 'get_weather', content: 'cold' },
      ],
      functions: [{ name: 'get_weather', parameters: { type: 'object', properties: {} } }],
      function_call: { name: 'get_weather' },
    });
    expect(request.tools).toEqual([{ name: 'get_weather', parameters: { type: 'object', properties: {} } }]);
    expect(request.toolChoice).toEqual({ kind: 'tool', name: 'get_weather' });
    const call = request.messages[1]?.content[0];
    expect(call).toMatchObject({ type: 'tool-call', name: 'get_weather', argumentsJson: '{"city":"Oslo"}' });
    expect(request.messages[2]).toEqual({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: (call as { id: string }).id, toolName: 'get_weather', content: [{ type: 'text', text: 'cold' }] }],
    });
  });

  it('reads reasoning_content and refusals of earlier assistant turns, and drops empty text next to tool calls', () => {
    const request = decodeOpenAIChatRequest({
      model: 'deepseek-reasoner',
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b', reasoning_content: 'thinking' },
        { role: 'user', content: 'c' },
        { role: 'assistant', content: null, refusal: 'I cannot.' },
        { role: 'user', content: 'd' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'x', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'x', content: 'ok' },
      ],
    });
    expect(request.messages[1]?.content).toEqual([{ type: 'reasoning', text: 'thinking' }, { type: 'text', text: 'b' }]);
    expect(request.messages[3]?.content).toEqual([{ type: 'text', text: 'I cannot.' }]);
    expect(request.messages[5]?.content).toEqual([{ type: 'tool-call', id: 'x', name: 'f', argumentsJson: '{}' }]);
  });

  it('types plain base64 file data by its file name, PDF by default', () => {
    const request = decodeOpenAIChatRequest({
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'file', file: { filename: 'notes.txt', file_data: 'aGk=' } }, { type: 'file', file: { file_data: 'JVBERi0=' } }] }],
    });
    expect(request.messages[0]?.content).toEqual([
      { type: 'file', source: { kind: 'base64', mediaType: 'text/plain', data: 'aGk=' }, filename: 'notes.txt' },
      { type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0=' } },
    ]);
  });

  it('moves a late system message to the system prompt with a warning', () => {
    const request = decodeOpenAIChatRequest({ model: 'm', messages: [{ role: 'user', content: 'a' }, { role: 'system', content: 'late' }] });
    expect(request.system).toEqual([{ type: 'text', text: 'late' }]);
    expect(request.warnings).toEqual(['A system message after the start of the conversation was moved to the system prompt.']);
  });

  it('takes the stream flag from the hints when given', () => {
    expect(decodeOpenAIChatRequest({ model: 'm', messages: [{ role: 'user', content: 'a' }] }, { stream: true }).stream).toBe(true);
    expect(decodeOpenAIChatRequest({ model: 'm', messages: [{ role: 'user', content: 'a' }], stream: true }).stream).toBe(true);
  });

  it('answers 400 naming the field for what cannot be translated', () => {
    const user = { role: 'user', content: 'x' };
    rejects({ model: 'm', messages: [user, { role: 'tool', tool_call_id: 'nope', content: 'r' }] }, 'messages[1].tool_call_id');
    rejects({ model: 'm', messages: [user], n: 2 }, 'n');
    rejects({ model: 'm', messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc' } }] }] }, 'messages[0].content[0].file.file_id');
    rejects({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png,rawdata' } }] }] }, 'messages[0].content[0].image_url.url');
    rejects({ model: 'm', messages: [{ role: 'user', content: [{ type: 'input_text', text: 'x' }] }] }, 'messages[0].content[0].type');
    rejects({ model: 'm', messages: [user], tools: [{ type: 'custom', custom: { name: 'grammar' } }] }, 'tools[0].type');
    rejects({ model: 'm', messages: [user], stop: [1, 2] }, 'stop');
    rejects({ model: 'm', messages: [user], seed: 1.5 }, 'seed');
    rejects({ model: 'm', messages: [user], response_format: { type: 'yaml' } }, 'response_format.type');
    rejects({ model: 'm', messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }] }, 'messages[0].content[0].type');
    // the shared validation still runs first
    rejects({ model: 'm', messages: [] }, 'messages');
    rejects({ model: 'm', messages: [user], temperature: 3 }, 'temperature');
  });
});
