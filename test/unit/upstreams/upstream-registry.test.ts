/** The registry's descriptors: every channel type owned once, and each capability declared as data matches the adapter's parts. */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/shared/clock.js';
import { AdapterRegistry } from '../../../src/upstreams/adapter-registry.js';
import type { UpstreamTransport } from '../../../src/upstreams/upstream-adapter.js';
import { CHANNEL_TYPES, UPSTREAMS } from '../../../src/upstreams/upstreams.js';

const transport: UpstreamTransport = { send: () => Promise.reject(new Error('not sent in this test')) };
const dependencies = { http: transport, clock: new ManualClock(0) };

describe('the upstream registry', () => {
  it('lists every channel type once, each served by an adapter', () => {
    expect(new Set(CHANNEL_TYPES).size).toBe(CHANNEL_TYPES.length);
    expect(CHANNEL_TYPES).toEqual([
      'openai', 'openai-compatible', 'azure-openai', 'anthropic', 'gemini', 'bedrock', 'vertex-ai', 'simulator',
      'mistral', 'groq', 'deepseek', 'xai', 'openrouter', 'together', 'fireworks', 'ollama', 'vllm', 'lmstudio',
      'cohere', 'jina', 'voyage',
    ]);
    const adapters = new AdapterRegistry(transport, dependencies.clock);
    for (const type of CHANNEL_TYPES) expect(adapters.supports(type)).toBe(true);
  });

  it.each(UPSTREAMS.map((upstream) => [upstream.channelTypes.join(', '), upstream] as const))('%s: the declared capabilities match the adapter', (_name, upstream) => {
    const adapter = upstream.createAdapter(dependencies);
    const { capabilities } = upstream;
    expect(adapter.wire).toBe(upstream.wire);
    // Declared pass-through operations are ones the wire has, and only an adapter that passes bodies through declares any.
    for (const kind of capabilities.passThrough) expect(upstream.wire.passThrough[kind], kind).not.toBeNull();
    expect(adapter.passThrough !== undefined).toBe(capabilities.passThrough.length > 0);
    expect(adapter.embeddings !== undefined).toBe(capabilities.embeddings);
    expect(adapter.rerank !== undefined).toBe(capabilities.rerank === true);
    expect(adapter.countTokens?.build !== undefined).toBe(capabilities.countTokens === 'upstream');
    const media = adapter.media;
    const mediaKinds = [
      ...(media?.openAIMediaRequest !== undefined ? ['image-generation', 'image-edits', 'image-variations', 'transcriptions', 'translations', 'speech', 'moderations'] : []),
      ...(media?.imageGeneration !== undefined ? ['image-generation'] : []),
    ];
    expect([...new Set(mediaKinds)].sort()).toEqual([...capabilities.media].sort());
  });
});
