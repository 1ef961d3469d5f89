import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../../src/shared/clock.js';
import { SimulatorAdapter } from '../../../../src/upstreams/simulator/simulator-adapter.js';
import { simulatedVector } from '../../../../src/upstreams/simulator/simulated-embedding.js';
import type { UpstreamAdapter, UpstreamRequest, UpstreamResponse } from '../../../../src/upstreams/upstream-adapter.js';
import { channel, chatRequest, collect } from '../../openai/openai-test-helpers.js';

const adapter = new SimulatorAdapter(new ManualClock(1_750_000_000_000));
const simulator = channel('simulator', { name: 'sim', settings: { output_tokens: 8 } });

async function send(request: UpstreamRequest): Promise<UpstreamResponse> {
  return adapter.transport(simulator).send(request, { signal: new AbortController().signal, timeouts: { firstByteMs: 1000, idleMs: 1000 } });
}

async function bytesOf(response: UpstreamResponse): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of response.body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

describe('SimulatorAdapter translated path', () => {
  it('answers a canonical request with a canonical response', async () => {
    const request = chatRequest({ system: [{ type: 'text', text: 'Be brief.' }], maxOutputTokens: 7 });
    const upstream = adapter.buildChatRequest(simulator, '', request, 'sim-model');
    expect(upstream.url).toBe('simulator://sim/sim-model/chat/completions');
    const response = adapter.parseChatResponse(await bytesOf(await send(upstream)), request);
    const text = response.content[0]?.type === 'text' ? response.content[0].text : '';
    expect(text.startsWith('[simulated response from the gateway simulator] ')).toBe(true);
    expect(text.split(' ')).toHaveLength(7);
    expect(response.finishReason).toEqual({ unified: 'length', raw: 'length' });
    expect(response.model).toBe('sim-model');
    expect(response.usage.output.total).toBe(7);
    expect(response.created).toBe(1_750_000_000);
  });

  it('streams canonical parts, with usage', async () => {
    const request = chatRequest({ stream: true });
    const parts = await collect(adapter.parseChatStream((await send(adapter.buildChatRequest(simulator, '', request, 'sim-model'))).body, request));
    expect(parts[0]).toMatchObject({ type: 'response-start', model: 'sim-model' });
    const text = parts.map((part) => (part.type === 'text-delta' ? part.delta : '')).join('');
    expect(text.startsWith('[simulated response from the gateway simulator]')).toBe(true);
    expect(parts.at(-1)).toMatchObject({ type: 'finish', reason: { unified: 'stop' }, usage: { output: { total: 8 } } });
    // No counter for canonical requests: counted locally.
    expect((adapter as UpstreamAdapter).countTokens?.build).toBeUndefined();
  });

  it('answers embeddings with deterministic unit vectors, in base64 through the OpenAI path', async () => {
    const embedding = { model: 'public', inputs: ['alpha', 'beta', 'alpha'], dimensions: 16, warnings: [] };
    const upstream = adapter.embeddings.build(simulator, '', embedding, 'sim-embed');
    expect(upstream.url).toBe('simulator://sim/sim-embed/embeddings');
    expect(JSON.parse(String(upstream.body ?? ''))).toMatchObject({ encoding_format: 'base64' });
    const response = adapter.embeddings.parse(await bytesOf(await send(upstream)), embedding);
    expect(response.model).toBe('sim-embed');
    expect(response.vectors).toHaveLength(3);
    expect(response.vectors[0]).toEqual(simulatedVector('alpha', 16));
    expect(response.vectors[2]).toEqual(response.vectors[0]);
    expect(response.vectors[1]).not.toEqual(response.vectors[0]);
    const norm = Math.sqrt((response.vectors[0] ?? []).reduce((sum, value) => sum + value * value, 0));
    expect(norm).toBeCloseTo(1, 5);
    expect(response.inputTokens).toBeGreaterThan(0);
  });

  it('answers pass-through embeddings in floats, token arrays included, with the channel dimensions', async () => {
    const custom = channel('simulator', { name: 'sim', settings: { embedding_dimensions: 8 } });
    const body = JSON.stringify({ model: 'sim-embed', input: [1, 2, 3] });
    const upstream = adapter.buildPassThrough(custom, '', { kind: 'embeddings', batch: false }, 'sim-embed', body);
    const response = await adapter.transport(custom).send(upstream, { signal: new AbortController().signal, timeouts: { firstByteMs: 1000, idleMs: 1000 } });
    const parsed = JSON.parse((await bytesOf(response)).toString('utf8')) as { data: Array<{ embedding: number[] }>; usage: { prompt_tokens: number } };
    expect(parsed.data[0]?.embedding).toHaveLength(8);
    expect(parsed.usage.prompt_tokens).toBe(3);
  });
});
