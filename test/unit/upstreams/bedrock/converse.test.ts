import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../../../src/ir/chat-request.js';
import type { StreamPart } from '../../../../src/ir/stream-part.js';
import type { Channel } from '../../../../src/domain/records.js';
import { BedrockAdapter } from '../../../../src/upstreams/bedrock/bedrock-adapter.js';
import { bedrockModelId, bedrockUrl } from '../../../../src/upstreams/bedrock/bedrock-endpoint.js';
import type { UpstreamTransport } from '../../../../src/upstreams/upstream-adapter.js';
import { buildConverseBody } from '../../../../src/upstreams/bedrock/build-converse-body.js';
import { parseConverseResponse } from '../../../../src/upstreams/bedrock/parse-converse-response.js';
import { parseConverseStream } from '../../../../src/upstreams/bedrock/parse-converse-stream.js';
import { bedrockEvent, bedrockException } from '../../../support/event-stream-encoder.js';

function chat(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return { model: 'public', system: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: false, extensions: {}, warnings: [], ...overrides };
}

function channel(settings: Record<string, unknown>): Channel {
  return { id: 'ch', name: 'b', type: 'bedrock', baseUrl: null, apiKeys: [], models: {}, priority: 0, weight: 1, enabled: true, headers: {}, settings, createdAt: 0, updatedAt: 0 };
}

async function collect(frames: Buffer[], chunkSize = 13): Promise<StreamPart[]> {
  const bytes = Buffer.concat(frames);
  async function* body(): AsyncIterable<Buffer> {
    for (let offset = 0; offset < bytes.length; offset += chunkSize) yield bytes.subarray(offset, offset + chunkSize);
  }
  const parts: StreamPart[] = [];
  for await (const part of parseConverseStream(body(), 'public')) parts.push(part);
  return parts;
}

describe('buildConverseBody', () => {
  it('puts tool results in user turns, merges turns, opens with a user turn and marks cache points', () => {
    const body = buildConverseBody(chat({
      system: [{ type: 'text', text: 'Be brief.', cacheControl: { type: 'ephemeral' } }],
      messages: [
        { role: 'assistant', content: [{ type: 'text', text: 'Earlier answer' }] },
        { role: 'user', content: [{ type: 'text', text: 'weather?' }, { type: 'image', source: { kind: 'url', url: 'data:image/png;base64,iVBOR' } }] },
        { role: 'assistant', content: [{ type: 'reasoning', text: 'need a tool', signature: 'sig' }, { type: 'tool-call', id: 'call_1', name: 'get_weather', argumentsJson: '{"location":"Paris"}' }] },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'get_weather', content: [{ type: 'text', text: '18C' }], isError: true }] },
        { role: 'user', content: [{ type: 'text', text: 'thanks' }] },
      ],
    }), { upstreamModel: 'anthropic.claude-3-haiku-20240307-v1:0', defaultMaxTokens: 4096 });
    expect(body.system).toEqual([{ text: 'Be brief.' }, { cachePoint: { type: 'default' } }]);
    expect(body.messages).toEqual([
      { role: 'user', content: [{ text: '.' }] },
      { role: 'assistant', content: [{ text: 'Earlier answer' }] },
      { role: 'user', content: [{ text: 'weather?' }, { image: { format: 'png', source: { bytes: 'iVBOR' } } }] },
      { role: 'assistant', content: [{ reasoningContent: { reasoningText: { text: 'need a tool', signature: 'sig' } } }, { toolUse: { toolUseId: 'call_1', name: 'get_weather', input: { location: 'Paris' } } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'call_1', content: [{ text: '18C' }], status: 'error' } }, { text: 'thanks' }] },
    ]);
    // The history used a tool the request no longer lists: Converse still needs its spec.
    expect(body.toolConfig).toEqual({ tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: { type: 'object', properties: {} } } } }] });
  });

  it('sends Claude thinking and top_k through additionalModelRequestFields, and maps tool choice', () => {
    const thinking = buildConverseBody(chat({ reasoning: { effort: 'low' }, temperature: 0.5 }), { upstreamModel: 'us.anthropic.claude-3-7-sonnet-20250219-v1:0', defaultMaxTokens: 4096 });
    expect(thinking.additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 2048 } });
    expect(thinking.inferenceConfig).toEqual({ maxTokens: 2048 + 4096 });
    const tools = buildConverseBody(chat({ topK: 5, tools: [{ name: 'f', parameters: { type: 'object' } }], toolChoice: { kind: 'tool', name: 'f' } }), { upstreamModel: 'anthropic.claude-3-haiku-20240307-v1:0', defaultMaxTokens: 4096 });
    expect(tools.toolConfig?.toolChoice).toEqual({ tool: { name: 'f' } });
    expect(tools.additionalModelRequestFields).toEqual({ top_k: 5 });
  });

  it('keeps Claude-only fields away from other models, with warnings', () => {
    const request = chat({ topK: 5, reasoning: { effort: 'high' }, seed: 1 });
    const body = buildConverseBody(request, { upstreamModel: 'meta.llama3-3-70b-instruct-v1:0', defaultMaxTokens: 4096 });
    expect(body.additionalModelRequestFields).toBeUndefined();
    expect(request.warnings).toHaveLength(3);
  });
});

describe('Bedrock endpoints', () => {
  it('turns a bare model id into the region’s cross-region inference profile, and leaves profiles and ARNs alone', () => {
    expect(bedrockModelId(channel({ region: 'eu-west-1', inference_profile: 'auto' }), 'anthropic.claude-3-haiku-20240307-v1:0')).toBe('eu.anthropic.claude-3-haiku-20240307-v1:0');
    expect(bedrockModelId(channel({ region: 'ap-northeast-1', inference_profile: 'auto' }), 'amazon.nova-pro-v1:0')).toBe('apac.amazon.nova-pro-v1:0');
    expect(bedrockModelId(channel({ region: 'us-east-1', inference_profile: 'global' }), 'anthropic.claude-sonnet-4-5-20250929-v1:0')).toBe('global.anthropic.claude-sonnet-4-5-20250929-v1:0');
    expect(bedrockModelId(channel({ region: 'us-east-1', inference_profile: 'auto' }), 'us.meta.llama3-3-70b-instruct-v1:0')).toBe('us.meta.llama3-3-70b-instruct-v1:0');
    expect(bedrockModelId(channel({ region: 'us-east-1', inference_profile: 'auto' }), 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/x')).toBe('arn:aws:bedrock:us-east-1:123456789012:inference-profile/x');
    expect(bedrockModelId(channel({ region: 'us-east-1' }), 'anthropic.claude-3-haiku-20240307-v1:0')).toBe('anthropic.claude-3-haiku-20240307-v1:0');
  });

  it('builds the regional runtime URL with the model id escaped', () => {
    expect(bedrockUrl(channel({ region: 'us-west-2' }), 'anthropic.claude-3-haiku-20240307-v1:0', 'converse-stream')).toBe('https://bedrock-runtime.us-west-2.amazonaws.com/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream');
  });
});

describe('BedrockAdapter', () => {
  it('applies the channel’s guardrail and signs through the transport', () => {
    const adapter = new BedrockAdapter({} as UpstreamTransport);
    const request = adapter.buildChatRequest(channel({ region: 'us-east-1', guardrail_identifier: 'gr-123', guardrail_version: '2' }), 'AKID:SECRET', chat(), 'amazon.nova-pro-v1:0');
    expect(JSON.parse(request.body as string)).toMatchObject({ guardrailConfig: { guardrailIdentifier: 'gr-123', guardrailVersion: '2' } });
    expect(request.authorize).toBeTypeOf('function');
    expect(adapter.buildChatRequest(channel({ region: 'us-east-1' }), 'ABSKapikey', chat(), 'amazon.nova-pro-v1:0').headers.authorization).toBe('Bearer ABSKapikey');
  });
});

describe('parseConverseResponse', () => {
  it('reads reasoning with its signature, text, tool use, stop reason and cache usage', () => {
    const response = parseConverseResponse(Buffer.from(JSON.stringify({
      output: { message: { role: 'assistant', content: [
        { reasoningContent: { reasoningText: { text: 'hmm', signature: 'sig-1' } } },
        { text: 'Let me check.' },
        { toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { location: 'Paris' } } },
      ] } },
      stopReason: 'tool_use',
      usage: { inputTokens: 10, outputTokens: 20, totalTokens: 30, cacheReadInputTokens: 100, cacheWriteInputTokens: 5 },
    })), 'public');
    expect(response.content).toEqual([
      { type: 'reasoning', text: 'hmm', signature: 'sig-1' },
      { type: 'text', text: 'Let me check.' },
      { type: 'tool-call', id: 'tooluse_1', name: 'get_weather', argumentsJson: '{"location":"Paris"}' },
    ]);
    expect(response.finishReason).toEqual({ unified: 'tool-calls', raw: 'tool_use' });
    expect(response.usage.input).toEqual({ total: 115, noCache: 10, cacheRead: 100, cacheWrite: 5 });
  });
});

describe('parseConverseStream', () => {
  it('turns reasoning, text and tool events into canonical parts, however the frames are chunked', async () => {
    const frames = [
      bedrockEvent('messageStart', { role: 'assistant' }),
      bedrockEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'thinking' } } }),
      bedrockEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { signature: 'sig-2' } } }),
      bedrockEvent('contentBlockStop', { contentBlockIndex: 0 }),
      bedrockEvent('contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'Hello' } }),
      bedrockEvent('contentBlockStop', { contentBlockIndex: 1 }),
      bedrockEvent('contentBlockStart', { contentBlockIndex: 2, start: { toolUse: { toolUseId: 'tooluse_9', name: 'f' } } }),
      bedrockEvent('contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '{"a":' } } }),
      bedrockEvent('contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '1}' } } }),
      bedrockEvent('contentBlockStop', { contentBlockIndex: 2 }),
      bedrockEvent('messageStop', { stopReason: 'tool_use' }),
      bedrockEvent('metadata', { usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 }, metrics: { latencyMs: 1 } }),
    ];
    for (const size of [1, 7, 4096]) {
      const parts = await collect(frames, size);
      expect(parts.map((part) => part.type)).toEqual([
        'response-start', 'reasoning-start', 'reasoning-delta', 'reasoning-end', 'text-start', 'text-delta', 'text-end',
        'tool-input-start', 'tool-input-delta', 'tool-input-delta', 'tool-input-end', 'usage', 'finish',
      ]);
      expect(parts[3]).toMatchObject({ type: 'reasoning-end', signature: 'sig-2' });
      expect(parts[7]).toMatchObject({ toolCallId: 'tooluse_9', toolName: 'f', index: 0 });
      expect(parts.at(-1)).toMatchObject({ type: 'finish', reason: { unified: 'tool-calls', raw: 'tool_use' }, usage: { input: { total: 3 }, output: { total: 4 } } });
    }
  });

  it('fails before the first part as a retryable error, and after it as an error part', async () => {
    await expect(collect([bedrockException('throttlingException', 'slow down')])).rejects.toMatchObject({ code: 'upstream_error' });
    const parts = await collect([
      bedrockEvent('messageStart', { role: 'assistant' }),
      bedrockEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hel' } }),
      bedrockException('modelStreamErrorException', 'model failed'),
    ]);
    expect(parts.at(-1)).toEqual({ type: 'error', status: 502, code: 'upstream_error', message: 'Upstream stream error (modelStreamErrorException): model failed' });
  });

  it('reports a stream cut before messageStop', async () => {
    const parts = await collect([bedrockEvent('messageStart', { role: 'assistant' }), bedrockEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hel' } })]);
    expect(parts.at(-1)).toMatchObject({ type: 'error', status: 502 });
  });
});
