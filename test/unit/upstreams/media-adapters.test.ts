/** Where each adapter sends media requests, and how it authenticates them. */
import { describe, expect, it } from 'vitest';
import { AdapterRegistry } from '../../../src/upstreams/adapter-registry.js';
import type { UpstreamTransport } from '../../../src/upstreams/upstream-adapter.js';
import { systemClock } from '../../../src/shared/clock.js';
import { channel } from '../openai/openai-test-helpers.js';

const transport: UpstreamTransport = { send: () => Promise.reject(new Error('not sent in this test')) };
const adapters = new AdapterRegistry(transport, systemClock);
const streamed = { length: 3, async *open(): AsyncIterable<Buffer> { yield Buffer.from('abc'); } };

describe('media capabilities', () => {
  it('OpenAI and compatible channels: <base>/<path> with a Bearer key; a streamed form keeps its length', () => {
    const media = adapters.get('openai-compatible')?.media;
    const request = media?.openAIMediaRequest?.(channel('openai-compatible', { baseUrl: 'https://llm.example/v1/', headers: { 'x-extra': '1' } }), 'sk-1', '/audio/transcriptions', 'whisper-large', { contentType: 'multipart/form-data; boundary=z', body: streamed });
    expect(request).toMatchObject({ url: 'https://llm.example/v1/audio/transcriptions', method: 'POST', body: null });
    expect(request?.headers).toEqual({ 'x-extra': '1', authorization: 'Bearer sk-1', 'content-type': 'multipart/form-data; boundary=z', 'content-length': '3' });
    expect(request?.streamedBody).toBe(streamed);
  });

  it('Azure OpenAI: the deployment URL with api-version, the api-key header; JSON bodies as text', () => {
    const media = adapters.get('azure-openai')?.media;
    const request = media?.openAIMediaRequest?.(channel('azure-openai', { baseUrl: 'https://res.openai.azure.com', settings: { api_version: '2025-04-01-preview' } }), 'az-key', '/images/generations', 'my-dalle', { contentType: 'application/json', body: '{"prompt":"x"}' });
    expect(request?.url).toBe('https://res.openai.azure.com/openai/deployments/my-dalle/images/generations?api-version=2025-04-01-preview');
    expect(request?.headers['api-key']).toBe('az-key');
    expect(request?.body).toBe('{"prompt":"x"}');
    expect(request?.streamedBody).toBeUndefined();
  });

  it('Gemini channels generate images through generateContent; Anthropic and the simulator have no media', () => {
    const gemini = adapters.get('gemini')?.media;
    expect(gemini?.openAIMediaRequest).toBeUndefined();
    const request = gemini?.imageGeneration?.buildRequest(channel('gemini', { baseUrl: 'https://generativelanguage.googleapis.com' }), 'g-key', { model: 'm', prompt: 'p', n: 1, warnings: [] }, 'gemini-2.5-flash-image');
    expect(request?.url).toBe('https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash-image:generateContent');
    expect(request?.headers['x-goog-api-key']).toBe('g-key');
    expect(adapters.get('anthropic')?.media).toBeUndefined();
    expect(adapters.get('simulator')?.media).toBeUndefined();
  });
});
