import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../../../src/ir/chat-request.js';
import { OpenAIAdapter } from '../../../../src/upstreams/openai/openai-adapter.js';
import { AzureOpenAIAdapter } from '../../../../src/upstreams/azure-openai/azure-openai-adapter.js';
import { isOpenAIReasoningModel } from '../../../../src/upstreams/openai/openai-reasoning-model.js';
import { channel, chatRequest, parsedBody, unusedTransport } from '../../openai/openai-test-helpers.js';

const openai = new OpenAIAdapter(unusedTransport);
const azure = new AzureOpenAIAdapter(unusedTransport);

function build(request: ChatRequest, upstreamModel = 'gpt-4o', type: 'openai' | 'openai-compatible' = 'openai'): Record<string, unknown> {
  return parsedBody(openai.buildChatRequest(channel(type), 'sk-key', request, upstreamModel).body?.toString() ?? null);
}

describe('OpenAIAdapter.buildChatRequest', () => {
  it('builds the URL, auth and an OpenAI body from every canonical field', () => {
    const request = chatRequest({
      system: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: 'Use metric.', cacheControl: { type: 'ephemeral' } }],
      stream: true,
      maxOutputTokens: 200,
      temperature: 0.2,
      topP: 0.8,
      stopSequences: ['END'],
      seed: 3,
      presencePenalty: 0.1,
      frequencyPenalty: 0.2,
      tools: [{ name: 'lookup', description: 'Looks up', parameters: { type: 'object', properties: {} }, strict: true }],
      toolChoice: { kind: 'tool', name: 'lookup' },
      parallelToolCalls: false,
      responseFormat: { kind: 'json-schema', name: 'answer', schema: { type: 'object' }, strict: true },
      user: 'u-1',
    });
    const upstream = openai.buildChatRequest(channel('openai', { headers: { 'x-extra': '1' } }), 'sk-key', request, 'gpt-4o-2024-08-06');
    expect(upstream.url).toBe('https://api.openai.com/v1/chat/completions');
    expect(upstream.method).toBe('POST');
    expect(upstream.headers).toEqual({ 'x-extra': '1', 'content-type': 'application/json', authorization: 'Bearer sk-key' });
    expect(parsedBody(upstream.body?.toString() ?? null)).toEqual({
      model: 'gpt-4o-2024-08-06',
      messages: [{ role: 'system', content: 'Be brief.\n\nUse metric.' }, { role: 'user', content: 'Hello' }],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 200,
      temperature: 0.2,
      top_p: 0.8,
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      stop: ['END'],
      seed: 3,
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} }, description: 'Looks up', strict: true } }],
      tool_choice: { type: 'function', function: { name: 'lookup' } },
      parallel_tool_calls: false,
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
      user: 'u-1',
    });
    expect(request.warnings).toEqual([]);
  });

  it('converts a tool conversation in Anthropic shape (results in a user turn) into OpenAI order', () => {
    const request = chatRequest({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'I should call the tool.', signature: 'sig' },
            { type: 'text', text: 'Let me check.' },
            { type: 'tool-call', id: 'toolu_1', name: 'get_weather', argumentsJson: '{"city":"Paris"}', signature: 'x' },
            { type: 'tool-call', id: 'toolu_2', name: 'get_time', argumentsJson: '' },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool-result', toolCallId: 'toolu_1', toolName: 'get_weather', content: [{ type: 'text', text: '18' }, { type: 'text', text: '°C' }], isError: false },
            { type: 'tool-result', toolCallId: 'toolu_2', toolName: 'get_time', content: [{ type: 'text', text: 'failed' }], isError: true },
            { type: 'text', text: 'Thanks!' },
          ],
        },
      ],
    });
    expect(build(request).messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: 'Let me check.',
        tool_calls: [
          { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'toolu_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: '18°C' },
      { role: 'tool', tool_call_id: 'toolu_2', content: 'failed' },
      { role: 'user', content: 'Thanks!' },
    ]);
    expect(request.warnings).toEqual(['The error flag of tool results is not sent to OpenAI models (their tool messages have none).']);
  });

  it('sends images, documents and audio as OpenAI content parts, and tool-result images after the tool messages', () => {
    const request = chatRequest({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look' },
            { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBOR' }, detail: 'high' },
            { type: 'image', source: { kind: 'url', url: 'https://example.com/a.jpg' } },
            { type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBER' } },
            { type: 'file', source: { kind: 'base64', mediaType: 'audio/mpeg', data: 'SUQz' } },
            { type: 'file', source: { kind: 'base64', mediaType: 'audio/ogg', data: 'T2dn' } },
            { type: 'file', source: { kind: 'url', url: 'https://example.com/doc.pdf', mediaType: 'application/pdf' } },
            { type: 'file', source: { kind: 'base64', mediaType: 'text/plain', data: Buffer.from('plain notes').toString('base64') }, filename: 'notes.txt' },
            { type: 'file', source: { kind: 'base64', mediaType: 'video/mp4', data: 'AAAA' } },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool-call', id: 'c1', name: 'screenshot', argumentsJson: '{}' }] },
        {
          role: 'tool',
          content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'screenshot', content: [{ type: 'text', text: 'done' }, { type: 'image', source: { kind: 'url', url: 'https://example.com/s.png' } }] }],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'I see it.' }] },
      ],
    });
    expect(build(request).messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBOR', detail: 'high' } },
          { type: 'image_url', image_url: { url: 'https://example.com/a.jpg' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBER', filename: 'document.pdf' } },
          { type: 'input_audio', input_audio: { data: 'SUQz', format: 'mp3' } },
          { type: 'text', text: 'plain notes' },
        ],
      },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'screenshot', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'done' },
      { role: 'user', content: [{ type: 'text', text: 'Images returned by tool call c1:' }, { type: 'image_url', image_url: { url: 'https://example.com/s.png' } }] },
      { role: 'assistant', content: 'I see it.' },
    ]);
    expect(request.warnings).toEqual([
      'Audio of type audio/ogg was dropped: OpenAI chat completions take wav and mp3 audio only.',
      'A file given by URL was dropped: OpenAI chat completions take files only inline.',
      'A file of type video/mp4 was dropped: OpenAI chat completions take PDF files, images, text and wav/mp3 audio.',
      'Images in tool results were sent in a user message after the tool messages: OpenAI tool messages hold only text.',
    ]);
  });

  it('follows reasoning-model rules: max_completion_tokens, default sampling only, no stop, reasoning_effort', () => {
    const sampling = { maxOutputTokens: 500, temperature: 0.7, topP: 0.5, presencePenalty: 1, frequencyPenalty: 1, stopSequences: ['x'], reasoning: { effort: 'high' as const } };
    const request = chatRequest(sampling);
    const body = build(request, 'o3-mini');
    expect(body).toEqual({ model: 'o3-mini', messages: [{ role: 'user', content: 'Hello' }], max_completion_tokens: 500, reasoning_effort: 'high' });
    expect(request.warnings).toHaveLength(5);
    expect(build(chatRequest({ temperature: 1 }), 'gpt-5-mini')).toMatchObject({ temperature: 1 });
    // building twice (a retry on another channel) does not repeat warnings
    build(request, 'o3-mini');
    expect(request.warnings).toHaveLength(5);
  });

  it('maps thinking budgets to an effort and drops reasoning_effort for OpenAI models that do not reason', () => {
    const budget = (budgetTokens: number, model: string): unknown => build(chatRequest({ reasoning: { budgetTokens } }), model).reasoning_effort;
    expect(budget(1024, 'o4-mini')).toBe('low');
    expect(budget(8000, 'o4-mini')).toBe('medium');
    expect(budget(32_000, 'o4-mini')).toBe('high');
    expect(budget(0, 'o4-mini')).toBe('low');
    const plain = chatRequest({ reasoning: { effort: 'medium' } });
    expect(build(plain, 'gpt-4o')).not.toHaveProperty('reasoning_effort');
    expect(plain.warnings).toEqual(["'reasoning_effort' was dropped: gpt-4o is not a reasoning model."]);
    // OpenAI-compatible providers decide for themselves; reasoning switched off sends nothing to a model that does not reason
    expect(build(chatRequest({ reasoning: { effort: 'medium' } }), 'qwen3-32b', 'openai-compatible').reasoning_effort).toBe('medium');
    expect(build(chatRequest({ reasoning: { budgetTokens: 0 } }), 'qwen3-32b', 'openai-compatible')).not.toHaveProperty('reasoning_effort');
  });

  it('adds a JSON instruction when OpenAI JSON mode would refuse a prompt that never says JSON', () => {
    const request = chatRequest({ responseFormat: { kind: 'json' } });
    expect(build(request).messages).toEqual([{ role: 'system', content: 'Respond in JSON.' }, { role: 'user', content: 'Hello' }]);
    const withSystem = build(chatRequest({ system: [{ type: 'text', text: 'Be nice.' }], responseFormat: { kind: 'json' } }));
    expect(withSystem.messages).toEqual([{ role: 'system', content: 'Be nice.\n\nRespond in JSON.' }, { role: 'user', content: 'Hello' }]);
    const mentioned = build(chatRequest({ messages: [{ role: 'user', content: [{ type: 'text', text: 'Answer in json' }] }], responseFormat: { kind: 'json' } }));
    expect(mentioned.messages).toEqual([{ role: 'user', content: 'Answer in json' }]);
    expect(build(chatRequest({ responseFormat: { kind: 'json' } }), 'llama', 'openai-compatible').messages).toEqual([{ role: 'user', content: 'Hello' }]);
  });

  it('drops what OpenAI cannot take, with warnings', () => {
    const request = chatRequest({ topK: 40, toolChoice: { kind: 'required' }, responseFormat: { kind: 'json-schema', name: 'my schema!', schema: {} } });
    const body = build(request);
    expect(body).not.toHaveProperty('tool_choice');
    expect(body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'my_schema_', schema: {} } });
    expect(request.warnings).toEqual(["'top_k' was dropped: OpenAI models do not take it.", 'tool_choice was dropped: the request has no tools.']);
  });
});

describe('AzureOpenAIAdapter.buildChatRequest', () => {
  it('targets the deployment with api-version and the api-key header, or the v1 API', () => {
    const upstream = azure.buildChatRequest(channel('azure-openai', { baseUrl: 'https://acme.openai.azure.com/' }), 'azure-key', chatRequest(), 'gpt-4o-prod');
    expect(upstream.url).toBe('https://acme.openai.azure.com/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21');
    expect(upstream.headers).toEqual({ 'content-type': 'application/json', 'api-key': 'azure-key' });
    expect(parsedBody(upstream.body?.toString() ?? null)).toMatchObject({ model: 'gpt-4o-prod' });
    const v1 = azure.buildChatRequest(channel('azure-openai', { baseUrl: 'https://acme.openai.azure.com', settings: { api_version: 'v1' } }), 'k', chatRequest(), 'gpt-4o');
    expect(v1.url).toBe('https://acme.openai.azure.com/openai/v1/chat/completions');
  });

  it('treats deployments listed in settings.reasoning_models as reasoning models', () => {
    const settings = { reasoning_models: ['thinker'] };
    const upstream = azure.buildChatRequest(channel('azure-openai', { baseUrl: 'https://a.openai.azure.com', settings }), 'k', chatRequest({ maxOutputTokens: 10 }), 'thinker');
    expect(parsedBody(upstream.body?.toString() ?? null)).toMatchObject({ max_completion_tokens: 10 });
  });
});

describe('isOpenAIReasoningModel', () => {
  it('recognises o-series and gpt-5 models by name, behind routers too, but not chat variants', () => {
    for (const model of ['o1', 'o3-mini-2025-01-31', 'o4-mini', 'gpt-5', 'gpt-5.1-codex', 'openai/o3', 'GPT-5-mini']) expect(isOpenAIReasoningModel(model)).toBe(true);
    for (const model of ['gpt-4o', 'gpt-4.1-mini', 'gpt-5-chat-latest', 'omni-moderation-latest', 'llama-3-o1', 'deepseek-reasoner']) expect(isOpenAIReasoningModel(model)).toBe(false);
    expect(isOpenAIReasoningModel('my-deployment', ['my-deployment'])).toBe(true);
  });
});
