import { describe, expect, it } from 'vitest';
import { decodeResponsesRequest, validateResponsesRequest } from '../../../../src/codecs/openai-responses/decode-request.js';
import { GatewayError } from '../../../../src/errors/gateway-error.js';

function errorOf(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
}

describe('decodeResponsesRequest', () => {
  it('maps a string input, instructions and the sampling settings', () => {
    const request = decodeResponsesRequest({
      model: 'm', input: 'Hello', instructions: 'Be brief.', max_output_tokens: 100, temperature: 0.5, top_p: 0.9,
      parallel_tool_calls: false, user: 'u-1', reasoning: { effort: 'low', summary: 'auto' }, text: { format: { type: 'json_object' } },
      metadata: { a: '1' }, store: false, include: ['reasoning.encrypted_content'],
    });
    expect(request).toMatchObject({
      model: 'm', stream: false, system: [{ type: 'text', text: 'Be brief.' }], messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
      maxOutputTokens: 100, temperature: 0.5, topP: 0.9, parallelToolCalls: false, user: 'u-1', reasoning: { effort: 'low', includeThoughts: true },
      responseFormat: { kind: 'json' }, warnings: [],
    });
  });

  it('groups the items of a tool-calling conversation into canonical turns', () => {
    const request = decodeResponsesRequest({
      model: 'm',
      input: [
        { role: 'developer', content: 'Use tools.' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather?' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'low' }] },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'thinking' }], encrypted_content: 'ugw1.s.SIG' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
        { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"location":"Paris"}' },
        { type: 'function_call', call_id: 'c2', name: 'get_time', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'sunny' },
        { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'noon' }] },
      ],
      tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object' } }, { type: 'function', name: 'get_time', description: 'now', strict: true }],
      tool_choice: { type: 'function', name: 'get_weather' },
    });
    expect(request.system).toEqual([{ type: 'text', text: 'Use tools.' }]);
    expect(request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather?' }, { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' }, detail: 'low' }] },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'thinking', signature: 'SIG' },
          { type: 'text', text: 'Checking.' },
          { type: 'tool-call', id: 'c1', name: 'get_weather', argumentsJson: '{"location":"Paris"}' },
          { type: 'tool-call', id: 'c2', name: 'get_time', argumentsJson: '{}' },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c1', toolName: 'get_weather', content: [{ type: 'text', text: 'sunny' }] },
          { type: 'tool-result', toolCallId: 'c2', toolName: 'get_time', content: [{ type: 'text', text: 'noon' }] },
        ],
      },
    ]);
    expect(request.tools).toEqual([{ name: 'get_weather', parameters: { type: 'object' } }, { name: 'get_time', description: 'now', strict: true, parameters: { type: 'object', properties: {} } }]);
    expect(request.toolChoice).toEqual({ kind: 'tool', name: 'get_weather' });
  });

  it('keeps redacted reasoning and drops reasoning state another provider issued, with a warning', () => {
    const request = decodeResponsesRequest({
      model: 'm',
      input: [
        { role: 'user', content: 'x' },
        { type: 'reasoning', summary: [], encrypted_content: 'ugw1.r.DATA' },
        { type: 'reasoning', summary: [{ type: 'summary_text', text: 'openai thought' }], encrypted_content: 'gAAAAAforeign' },
      ],
    });
    expect(request.messages[1]?.content).toEqual([{ type: 'reasoning', text: '', redactedData: 'DATA' }, { type: 'reasoning', text: 'openai thought' }]);
    expect(request.warnings.join(' ')).toMatch(/another provider/);
  });

  it('maps json_schema text formats and reports untranslated fields', () => {
    const request = decodeResponsesRequest({ model: 'm', input: 'x', text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true }, verbosity: 'low' }, service_tier: 'flex' });
    expect(request.responseFormat).toEqual({ kind: 'json-schema', name: 'out', schema: { type: 'object' }, strict: true });
    expect(request.extensions).toEqual({ service_tier: 'flex' });
    expect(request.warnings).toHaveLength(2);
  });

  it('names the field at fault', () => {
    expect(errorOf(() => decodeResponsesRequest({ model: 'm' })).param).toBe('input');
    expect(errorOf(() => decodeResponsesRequest({ model: '', input: 'x' })).param).toBe('model');
    expect(errorOf(() => decodeResponsesRequest({ model: 'm', input: 'x', max_output_tokens: 0 })).param).toBe('max_output_tokens');
    expect(errorOf(() => decodeResponsesRequest({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_audio' }] }] })).param).toBe('input[0].content[0].type');
    expect(errorOf(() => decodeResponsesRequest({ model: 'm', input: [{ type: 'function_call_output', call_id: 'x', output: 'y' }] })).param).toBe('input[0].call_id');
    expect(errorOf(() => decodeResponsesRequest({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }] })).message).toMatch(/stored with OpenAI/);
    expect(errorOf(() => decodeResponsesRequest({ model: 'm', input: 'x', reasoning: { effort: 'huge' } })).param).toBe('reasoning.effort');
  });

  it('maps web search and leaves out other hosted tools instead of refusing them', () => {
    const request = decodeResponsesRequest({ model: 'm', input: 'x', tools: [{ type: 'function', name: 'f' }, { type: 'web_search', filters: { allowed_domains: ['example.com'] } }, { type: 'file_search', vector_store_ids: ['vs_1'] }] });
    expect(request.hostedTools).toEqual([{ kind: 'web-search', allowedDomains: ['example.com'] }]);
    expect(request.droppedHostedTools).toEqual(['file_search']);
    expect(request.tools?.map((tool) => tool.name)).toEqual(['f']);
    expect(validateResponsesRequest({ model: 'm', input: 'x', tools: [{ type: 'web_search' }] }).nativeOnly).toBeNull();
  });

  it('refuses what only OpenAI can serve with unsupported_parameter', () => {
    for (const [extra, param] of [
      [{ previous_response_id: 'resp_1' }, 'previous_response_id'],
      [{ store: true }, 'store'],
      [{ background: true }, 'background'],
      [{ conversation: 'conv_1' }, 'conversation'],
      [{ tools: [{ type: 'function', name: 'f' }, { type: 'local_shell' }] }, 'tools[1].type'],
      [{ tool_choice: { type: 'web_search_preview' } }, 'tool_choice.type'],
      [{ input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input[0]'],
    ] as const) {
      const error = errorOf(() => decodeResponsesRequest({ model: 'm', input: 'x', ...extra }));
      expect(error.code).toBe('unsupported_parameter');
      expect(error.param).toBe(param);
      expect(validateResponsesRequest({ model: 'm', input: 'x', ...extra }).nativeOnly?.param).toBe(param);
    }
    expect(validateResponsesRequest({ model: 'm', input: 'x', store: false }).nativeOnly).toBeNull();
    // previous_response_id alone (no input) is valid for an OpenAI channel.
    expect(validateResponsesRequest({ model: 'm', previous_response_id: 'resp_1' }).nativeOnly?.param).toBe('previous_response_id');
  });
});
