import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeOpenAIEmbeddingRequest } from '../../../../src/codecs/openai-chat/decode-embedding-request.js';
import { encodeOpenAIEmbeddingResponse } from '../../../../src/codecs/openai-chat/encode-embedding-response.js';
import { base64ToFloat32, float32ToBase64 } from '../../../../src/wire/openai/float32-base64.js';
import { GatewayError } from '../../../../src/errors/gateway-error.js';
import type { EmbeddingRequest } from '../../../../src/ir/embedding.js';
import { OpenAIAdapter } from '../../../../src/upstreams/openai/openai-adapter.js';
import { AzureOpenAIAdapter } from '../../../../src/upstreams/azure-openai/azure-openai-adapter.js';
import { channel, fixtureBuffer, parsedBody, unusedTransport } from '../../openai/openai-test-helpers.js';

const float32 = fc.float({ noNaN: true, noDefaultInfinity: true });

describe('float32 base64', () => {
  it('round-trips random float32 vectors exactly', () => {
    fc.assert(fc.property(fc.array(float32, { maxLength: 64 }), (vector) => {
      const decoded = base64ToFloat32(float32ToBase64(vector));
      expect(decoded).not.toBeNull();
      // -0 survives as -0: compare bit patterns through Object.is
      decoded?.forEach((value, index) => expect(Object.is(value, vector[index])).toBe(true));
      expect(decoded).toHaveLength(vector.length);
    }), { numRuns: 100 });
  });

  it('is little-endian IEEE-754 float32', () => {
    expect(float32ToBase64([1])).toBe(Buffer.from([0x00, 0x00, 0x80, 0x3f]).toString('base64'));
    expect(base64ToFloat32('AAA=')).toBeNull();
  });
});

describe('decodeOpenAIEmbeddingRequest', () => {
  it('reads input, dimensions, encoding_format and user', () => {
    expect(decodeOpenAIEmbeddingRequest({ model: 'text-embedding-3-small', input: 'hi', dimensions: 256, encoding_format: 'base64', user: 'u' })).toEqual({
      request: { model: 'text-embedding-3-small', inputs: ['hi'], dimensions: 256, user: 'u', warnings: [] },
      encodingFormat: 'base64',
    });
    const decoded = decodeOpenAIEmbeddingRequest({ model: 'm', input: ['a', 'b'], extra: 1 });
    expect(decoded.encodingFormat).toBe('float');
    expect(decoded.request.inputs).toEqual(['a', 'b']);
    expect(decoded.request.warnings).toEqual(["'extra' is not translated for this model and was ignored."]);
  });

  it('answers 400 naming the field, token arrays included', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ input: 'x' }, 'model'],
      [{ model: 'm', input: [1, 2, 3] }, 'input'],
      [{ model: 'm', input: [[1, 2], [3]] }, 'input'],
      [{ model: 'm', input: [] }, 'input'],
      [{ model: 'm', input: 'x', dimensions: 0 }, 'dimensions'],
      [{ model: 'm', input: 'x', encoding_format: 'int8' }, 'encoding_format'],
    ];
    for (const [body, param] of cases) {
      let caught: unknown;
      try {
        decodeOpenAIEmbeddingRequest(body);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(GatewayError);
      expect((caught as GatewayError).param).toBe(param);
    }
  });
});

describe('encodeOpenAIEmbeddingResponse', () => {
  it('writes float arrays or base64 with the public model and usage', () => {
    const response = { model: 'upstream', vectors: [[0.5, -0.25]], inputTokens: 4 };
    expect(JSON.parse(encodeOpenAIEmbeddingResponse(response, { model: 'public', encodingFormat: 'float' }))).toEqual({
      object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.5, -0.25] }], model: 'public', usage: { prompt_tokens: 4, total_tokens: 4 },
    });
    const base64 = JSON.parse(encodeOpenAIEmbeddingResponse(response, { model: 'public', encodingFormat: 'base64' })) as { data: Array<{ embedding: string }> };
    expect(base64ToFloat32(base64.data[0]?.embedding ?? '')).toEqual([0.5, -0.25]);
  });
});

describe('OpenAI embeddings upstream', () => {
  const request = (): EmbeddingRequest => ({ model: 'public', inputs: ['a', 'b'], dimensions: 3, user: 'u', taskType: 'RETRIEVAL_QUERY', warnings: [] });

  it('asks OpenAI and Azure for base64, compatible providers for floats', () => {
    const openai = new OpenAIAdapter(unusedTransport);
    const official = request();
    const upstream = openai.embeddings.build(channel('openai'), 'sk', official, 'text-embedding-3-small');
    expect(upstream.url).toBe('https://api.openai.com/v1/embeddings');
    expect(parsedBody(upstream.body?.toString() ?? null)).toEqual({ model: 'text-embedding-3-small', input: ['a', 'b'], encoding_format: 'base64', dimensions: 3, user: 'u' });
    expect(official.warnings).toEqual(['The embedding task type RETRIEVAL_QUERY was dropped: OpenAI embedding models take none.']);
    const compatible = openai.embeddings.build(channel('openai-compatible', { baseUrl: 'http://localhost:8000/v1' }), 'sk', request(), 'bge-m3');
    expect(compatible.url).toBe('http://localhost:8000/v1/embeddings');
    expect(parsedBody(compatible.body?.toString() ?? null)).toMatchObject({ encoding_format: 'float' });
    const azure = new AzureOpenAIAdapter(unusedTransport).embeddings.build(channel('azure-openai', { baseUrl: 'https://a.openai.azure.com' }), 'k', request(), 'embed-dep');
    expect(azure.url).toBe('https://a.openai.azure.com/openai/deployments/embed-dep/embeddings?api-version=2024-10-21');
    expect(parsedBody(azure.body?.toString() ?? null)).toMatchObject({ encoding_format: 'base64' });
  });

  it('parses float and base64 answers (out of order) into vectors in input order', () => {
    const openai = new OpenAIAdapter(unusedTransport);
    const floats = openai.embeddings.parse(fixtureBuffer('openai-embeddings-float.json'), request());
    const base64 = openai.embeddings.parse(fixtureBuffer('openai-embeddings-base64.json'), request());
    expect(floats).toEqual({ model: 'text-embedding-3-small', vectors: [[0.0023064255, -0.009327292, -0.0028842222], [0.015797347, 0.0077, -0.0099]], inputTokens: 8 });
    expect(base64.vectors).toEqual(floats.vectors.map((vector) => vector.map((value) => Math.fround(value))));
    expect(() => openai.embeddings.parse(fixtureBuffer('openai-embeddings-float.json'), { ...request(), inputs: ['a', 'b', 'c'] })).toThrow(GatewayError);
    expect(() => openai.embeddings.parse(Buffer.from('nope'), request())).toThrow(GatewayError);
  });
});
